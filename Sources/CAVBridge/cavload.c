// SPDX-License-Identifier: GPL-3.0-or-later
// Loads Debian 12's FFmpeg with dlopen once per process and resolves the functions the bridge calls.
#include "cavfuncs.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

cav_functions cav_fn;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static char load_error[256];

#define SYM(lib, name)                                                                                    \
    do {                                                                                                  \
        *(void **)(&cav_fn.name) = dlsym(lib, #name);                                                     \
        if (!cav_fn.name) {                                                                               \
            snprintf(load_error, sizeof load_error, "FFmpeg has no %s (an unexpected version?)", #name); \
            return;                                                                                       \
        }                                                                                                 \
    } while (0)

static void *open_library(const char *soname) {
    void *lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(load_error, sizeof load_error, "cannot load %s (install Debian's libavformat59/libavcodec59)", soname);
    }
    return lib;
}

static void load(void) {
    void *util = open_library("libavutil.so.57");
    if (!util) return;
    void *codec = open_library("libavcodec.so.59");
    if (!codec) return;
    void *format = open_library("libavformat.so.59");
    if (!format) return;

    SYM(util, av_malloc);
    SYM(util, av_mallocz);
    SYM(util, av_free);
    SYM(util, av_freep);
    SYM(util, av_realloc_array);
    SYM(util, av_dict_get);
    SYM(util, av_dict_set);
    SYM(util, av_dict_free);
    SYM(util, av_frame_alloc);
    SYM(util, av_frame_free);
    SYM(util, av_frame_unref);
    SYM(util, av_log_set_level);
    SYM(util, av_strerror);
    SYM(util, av_image_get_buffer_size);
    SYM(util, av_image_copy_to_buffer);
    SYM(util, av_get_bytes_per_sample);
    SYM(util, av_sample_fmt_is_planar);

    SYM(codec, avcodec_parameters_copy);
    SYM(codec, avcodec_find_decoder);
    SYM(codec, avcodec_alloc_context3);
    SYM(codec, avcodec_parameters_to_context);
    SYM(codec, avcodec_open2);
    SYM(codec, avcodec_send_packet);
    SYM(codec, avcodec_receive_frame);
    SYM(codec, avcodec_free_context);
    SYM(codec, avcodec_get_name);
    SYM(codec, av_packet_alloc);
    SYM(codec, av_packet_free);
    SYM(codec, av_packet_unref);
    SYM(codec, av_packet_rescale_ts);

    SYM(format, avformat_alloc_context);
    SYM(format, avformat_open_input);
    SYM(format, avformat_find_stream_info);
    SYM(format, avformat_close_input);
    SYM(format, avformat_alloc_output_context2);
    SYM(format, avformat_free_context);
    SYM(format, avformat_new_stream);
    SYM(format, avformat_write_header);
    SYM(format, av_interleaved_write_frame);
    SYM(format, av_write_trailer);
    SYM(format, av_read_frame);
    SYM(format, av_guess_format);
    SYM(format, av_codec_get_id);
    SYM(format, av_codec_get_tag2);
    SYM(format, av_stream_new_side_data);
    SYM(format, avio_alloc_context);
    SYM(format, avio_context_free);
    SYM(format, avio_flush);

    // Metadata values must never reach a log: FFmpeg prints tags and file names in its messages.
    cav_fn.av_log_set_level(AV_LOG_QUIET);
    cav_fn.loaded = 1;
}

int cav_load(char *err, size_t err_size) {
    pthread_once(&once, load);
    if (cav_fn.loaded) return 0;
    if (err && err_size) snprintf(err, err_size, "%s", load_error[0] ? load_error : "FFmpeg could not be loaded");
    return -1;
}
