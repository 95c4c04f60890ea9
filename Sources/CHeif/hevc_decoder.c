// SPDX-License-Identifier: GPL-3.0-or-later
// An HEVC decoder plugin for libheif over libde265 with worker threads. libheif 1.15's own libde265 plugin starts
// one worker thread, so a single-item HEIC (x265 writes wavefront-parallel streams) decodes on one core: on a
// 12 MP photo that is most of a conversion's time. This plugin is the same decoder with as many threads as
// there are cores, registered above libheif's (priority 200 against 100); libheif still does everything else
// (grids, transformations, colour conversion). Like libheif, libde265 is reached through dlopen on first
// use; without it the plugin declines every format and libheif's own plugin decodes as before.
#include "lazy_library.h"
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <libde265/de265.h>
#include <libheif/heif_plugin.h>
#include "cheif.h"

static struct lazy_library libde265 = LAZY_LIBRARY("libde265.so.0");

// libde265's functions this plugin calls, resolved together so the plugin is all or nothing.
static struct {
    de265_error (*init)(void);
    de265_decoder_context *(*new_decoder)(void);
    de265_error (*start_worker_threads)(de265_decoder_context *, int);
    de265_error (*free_decoder)(de265_decoder_context *);
    de265_error (*push_NAL)(de265_decoder_context *, const void *, int, de265_PTS, void *);
    de265_error (*flush_data)(de265_decoder_context *);
    de265_error (*decode)(de265_decoder_context *, int *);
    const struct de265_image *(*get_next_picture)(de265_decoder_context *);
    void (*release_next_picture)(de265_decoder_context *);
    int (*get_image_width)(const struct de265_image *, int);
    int (*get_image_height)(const struct de265_image *, int);
    enum de265_chroma (*get_chroma_format)(const struct de265_image *);
    int (*get_bits_per_pixel)(const struct de265_image *, int);
    const uint8_t *(*get_image_plane)(const struct de265_image *, int, int *);
} de265;

static int threads = 1;
static int loaded;  // 1: every symbol resolved and de265_init succeeded

static int load(void) {
#define RESOLVE(field, name) if (!(de265.field = lazy_library_symbol(&libde265, name))) return 0;
    RESOLVE(init, "de265_init")
    RESOLVE(new_decoder, "de265_new_decoder")
    RESOLVE(start_worker_threads, "de265_start_worker_threads")
    RESOLVE(free_decoder, "de265_free_decoder")
    RESOLVE(push_NAL, "de265_push_NAL")
    RESOLVE(flush_data, "de265_flush_data")
    RESOLVE(decode, "de265_decode")
    RESOLVE(get_next_picture, "de265_get_next_picture")
    RESOLVE(release_next_picture, "de265_release_next_picture")
    RESOLVE(get_image_width, "de265_get_image_width")
    RESOLVE(get_image_height, "de265_get_image_height")
    RESOLVE(get_chroma_format, "de265_get_chroma_format")
    RESOLVE(get_bits_per_pixel, "de265_get_bits_per_pixel")
    RESOLVE(get_image_plane, "de265_get_image_plane")
#undef RESOLVE
    return de265.init() == DE265_OK;
}

static const struct heif_error ok = {heif_error_Ok, heif_suberror_Unspecified, "Success"};

static struct heif_error failure(enum heif_suberror_code code, const char *message) {
    struct heif_error e = {heif_error_Decoder_plugin_error, code, message};
    return e;
}

static const char *plugin_name(void) { return "libde265 HEVC decoder, threaded (metascrub)"; }

static int does_support_format(enum heif_compression_format format) {
    return loaded && format == heif_compression_HEVC ? 200 : 0;
}

static struct heif_error new_decoder(void **decoder) {
    de265_decoder_context *ctx = de265.new_decoder();
    if (!ctx) return failure(heif_suberror_Unspecified, "libde265 could not create a decoder");
    de265.start_worker_threads(ctx, threads);
    *decoder = ctx;
    return ok;
}

static void free_decoder(void *decoder) { de265.free_decoder(decoder); }

// libheif hands over NAL units each behind a 4-byte big-endian length (what its own plugin assumes too).
static struct heif_error push_data(void *decoder, const void *data, size_t size) {
    const uint8_t *bytes = data;
    size_t at = 0;
    while (at < size) {
        if (size - at < 4) return failure(heif_suberror_End_of_data, "NAL length runs past the data");
        uint32_t length = (uint32_t)bytes[at] << 24 | (uint32_t)bytes[at + 1] << 16 | (uint32_t)bytes[at + 2] << 8 | bytes[at + 3];
        at += 4;
        if (length > size - at || length > INT32_MAX) return failure(heif_suberror_End_of_data, "NAL unit runs past the data");
        if (de265.push_NAL(decoder, bytes + at, (int)length, 0, NULL) != DE265_OK)
            return failure(heif_suberror_Unspecified, "libde265 refused a NAL unit");
        at += length;
    }
    return ok;
}

// The decoded picture as a heif_image in its own chroma format and bit depth, planes copied row by row.
static struct heif_error to_heif_image(const struct de265_image *picture, struct heif_image **out) {
    enum de265_chroma chroma = de265.get_chroma_format(picture);
    int planes = chroma == de265_chroma_mono ? 1 : 3;
    int depth = de265.get_bits_per_pixel(picture, 0);
    for (int c = 1; c < planes; c++)
        if (de265.get_bits_per_pixel(picture, c) != depth)
            return failure(heif_suberror_Unsupported_color_conversion, "planes of different bit depths");
    struct heif_error e = heif_image_create(de265.get_image_width(picture, 0), de265.get_image_height(picture, 0),
                                            planes == 1 ? heif_colorspace_monochrome : heif_colorspace_YCbCr,
                                            (enum heif_chroma)chroma, out);
    if (e.code) return e;
    static const enum heif_channel channels[3] = {heif_channel_Y, heif_channel_Cb, heif_channel_Cr};
    for (int c = 0; c < planes; c++) {
        int width = de265.get_image_width(picture, c), height = de265.get_image_height(picture, c);
        int stride = 0, out_stride = 0;
        const uint8_t *in = de265.get_image_plane(picture, c, &stride);
        e = width > 0 && height > 0 && in ? heif_image_add_plane(*out, channels[c], width, height, depth)
                                          : failure(heif_suberror_Invalid_image_size, "decoded plane is empty");
        uint8_t *plane = e.code ? NULL : heif_image_get_plane(*out, channels[c], &out_stride);
        if (!plane) {
            heif_image_release(*out);
            *out = NULL;
            return e.code ? e : failure(heif_suberror_Unspecified, "heif_image has no plane");
        }
        size_t row = (size_t)width * ((depth + 7) / 8);
        for (int y = 0; y < height; y++) memcpy(plane + (size_t)y * out_stride, in + (size_t)y * stride, row);
    }
    return ok;
}

static struct heif_error decode_image(void *decoder, struct heif_image **out) {
    *out = NULL;
    de265.flush_data(decoder);
    int more = 0;
    do {
        more = 0;
        if (de265.decode(decoder, &more) != DE265_OK) break;
        const struct de265_image *picture = de265.get_next_picture(decoder);
        if (picture) {
            if (*out) heif_image_release(*out);
            *out = NULL;
            struct heif_error e = to_heif_image(picture, out);
            de265.release_next_picture(decoder);
            if (e.code) return e;
        }
    } while (more);
    return *out ? ok : failure(heif_suberror_Unspecified, "libde265 produced no picture");
}

static void set_strict_decoding(void *decoder, int flag) { (void)decoder; (void)flag; }

static const struct heif_decoder_plugin plugin = {
    3, plugin_name, NULL, NULL, does_support_format, new_decoder, free_decoder, push_data, decode_image,
    set_strict_decoding, "libde265-threaded"};

static pthread_mutex_t registration = PTHREAD_MUTEX_INITIALIZER;
static int registered;

int metascrub_heif_use_threaded_hevc(int worker_threads) {
    pthread_mutex_lock(&registration);
    if (!registered) {
        registered = 1;
        threads = worker_threads < 1 ? 1 : worker_threads > 8 ? 8 : worker_threads;
        loaded = load();
        if (loaded) heif_register_decoder_plugin(&plugin);
    }
    int in_use = loaded;
    pthread_mutex_unlock(&registration);
    return in_use;
}
