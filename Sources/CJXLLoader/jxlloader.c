// SPDX-License-Identifier: GPL-3.0-or-later
#include "jxlloader.h"
#include <dlfcn.h>
#include <pthread.h>

static cjxl_api api;
static const cjxl_api *loaded;
static pthread_once_t once = PTHREAD_ONCE_INIT;

#define LOAD(lib, field, name) do { *(void **)(&api.field) = dlsym(lib, name); if (!api.field) return; } while (0)

static void load(void) {
    void *jxl = dlopen("libjxl.so.0.7", RTLD_NOW | RTLD_LOCAL);
    void *threads = dlopen("libjxl_threads.so.0.7", RTLD_NOW | RTLD_LOCAL);
    if (!jxl || !threads) return;
    LOAD(jxl, version, "JxlDecoderVersion");
    LOAD(jxl, create, "JxlDecoderCreate");
    LOAD(jxl, destroy, "JxlDecoderDestroy");
    LOAD(jxl, set_parallel_runner, "JxlDecoderSetParallelRunner");
    LOAD(jxl, subscribe_events, "JxlDecoderSubscribeEvents");
    LOAD(jxl, set_input, "JxlDecoderSetInput");
    LOAD(jxl, close_input, "JxlDecoderCloseInput");
    LOAD(jxl, process_input, "JxlDecoderProcessInput");
    LOAD(jxl, get_basic_info, "JxlDecoderGetBasicInfo");
    LOAD(jxl, get_icc_profile_size, "JxlDecoderGetICCProfileSize");
    LOAD(jxl, get_color_as_icc_profile, "JxlDecoderGetColorAsICCProfile");
    LOAD(jxl, image_out_buffer_size, "JxlDecoderImageOutBufferSize");
    LOAD(jxl, set_image_out_buffer, "JxlDecoderSetImageOutBuffer");
    LOAD(threads, runner, "JxlResizableParallelRunner");
    LOAD(threads, runner_create, "JxlResizableParallelRunnerCreate");
    LOAD(threads, runner_destroy, "JxlResizableParallelRunnerDestroy");
    LOAD(threads, runner_set_threads, "JxlResizableParallelRunnerSetThreads");
    LOAD(threads, runner_suggest_threads, "JxlResizableParallelRunnerSuggestThreads");
    loaded = &api;
}

const cjxl_api *cjxl_load(void) {
    pthread_once(&once, load);
    return loaded;
}
