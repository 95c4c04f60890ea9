// SPDX-License-Identifier: GPL-3.0-or-later
// libjxl (Debian libjxl-dev 0.7.x), loaded with dlopen on first use: linking it costs ~13 ms at every process
// start (libjxl, libhwy, libbrotli, liblcms2), which every scan and pre-commit hook would pay for a format few
// runs convert. Only the decoder calls metascrub uses are exposed, with libjxl's own types.
#ifndef METASCRUB_JXLLOADER_H
#define METASCRUB_JXLLOADER_H
#include <jxl/decode.h>
#include <jxl/resizable_parallel_runner.h>

typedef struct {
    uint32_t (*version)(void);
    JxlDecoder *(*create)(const JxlMemoryManager *);
    void (*destroy)(JxlDecoder *);
    JxlDecoderStatus (*set_parallel_runner)(JxlDecoder *, JxlParallelRunner, void *);
    JxlDecoderStatus (*subscribe_events)(JxlDecoder *, int);
    JxlDecoderStatus (*set_input)(JxlDecoder *, const uint8_t *, size_t);
    void (*close_input)(JxlDecoder *);
    JxlDecoderStatus (*process_input)(JxlDecoder *);
    JxlDecoderStatus (*get_basic_info)(const JxlDecoder *, JxlBasicInfo *);
    JxlDecoderStatus (*get_icc_profile_size)(const JxlDecoder *, const JxlPixelFormat *, JxlColorProfileTarget, size_t *);
    JxlDecoderStatus (*get_color_as_icc_profile)(const JxlDecoder *, const JxlPixelFormat *, JxlColorProfileTarget, uint8_t *, size_t);
    JxlDecoderStatus (*image_out_buffer_size)(const JxlDecoder *, const JxlPixelFormat *, size_t *);
    JxlDecoderStatus (*set_image_out_buffer)(JxlDecoder *, const JxlPixelFormat *, void *, size_t);
    JxlParallelRunner runner;
    void *(*runner_create)(const JxlMemoryManager *);
    void (*runner_destroy)(void *);
    void (*runner_set_threads)(void *, size_t);
    uint32_t (*runner_suggest_threads)(uint64_t, uint64_t);
} cjxl_api;

/// The loaded API, or NULL when libjxl (libjxl0.7) is not installed or lacks a symbol. Thread-safe; loads once.
const cjxl_api *cjxl_load(void);
#endif
