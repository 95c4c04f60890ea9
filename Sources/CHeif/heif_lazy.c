// SPDX-License-Identifier: GPL-3.0-or-later
// libheif through dlopen on first use. Linking it pulled in libde265, x265, dav1d and libaom, whose load-time
// initialisers were a fifth of every process start (scripts/benchmark/findings.md), although most runs never
// open a HEIF. These definitions stand in for the functions metascrub calls, with libheif's own prototypes,
// so the Swift code calls libheif as before; each resolves its symbol when called. Without libheif.so.1 the
// calls fail like libheif's own failures (an error struct, NULL, 0), never a crash.
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include "cheif.h"

static void *library;
static pthread_once_t loaded = PTHREAD_ONCE_INIT;

static void load(void) { library = dlopen("libheif.so.1", RTLD_NOW | RTLD_LOCAL); }

static void *resolve(const char *name) {
    pthread_once(&loaded, load);
    return library ? dlsym(library, name) : NULL;
}

static const struct heif_error unavailable = {
    heif_error_Unsupported_feature, heif_suberror_Unspecified, "libheif.so.1 could not be loaded"};

struct heif_context* heif_context_alloc(void) {
    struct heif_context* (*f)(void) = resolve("heif_context_alloc");
    return f ? f() : NULL;
}

void heif_context_free(struct heif_context* a0) {
    void (*f)(struct heif_context*) = resolve("heif_context_free");
    if (f) f(a0);
}

struct heif_error heif_context_get_primary_image_handle(struct heif_context* a0, struct heif_image_handle** a1) {
    struct heif_error (*f)(struct heif_context*, struct heif_image_handle**) = resolve("heif_context_get_primary_image_handle");
    return f ? f(a0, a1) : unavailable;
}

struct heif_error heif_context_read_from_file(struct heif_context* a0, const char* a1, const struct heif_reading_options* a2) {
    struct heif_error (*f)(struct heif_context*, const char*, const struct heif_reading_options*) = resolve("heif_context_read_from_file");
    return f ? f(a0, a1, a2) : unavailable;
}

struct heif_error heif_context_read_from_memory(struct heif_context* a0, const void* a1, size_t a2, const struct heif_reading_options* a3) {
    struct heif_error (*f)(struct heif_context*, const void*, size_t, const struct heif_reading_options*) = resolve("heif_context_read_from_memory");
    return f ? f(a0, a1, a2, a3) : unavailable;
}

void heif_context_set_maximum_image_size_limit(struct heif_context* a0, int a1) {
    void (*f)(struct heif_context*, int) = resolve("heif_context_set_maximum_image_size_limit");
    if (f) f(a0, a1);
}

struct heif_error heif_decode_image(const struct heif_image_handle* a0, struct heif_image** a1, enum heif_colorspace a2, enum heif_chroma a3, const struct heif_decoding_options* a4) {
    struct heif_error (*f)(const struct heif_image_handle*, struct heif_image**, enum heif_colorspace, enum heif_chroma, const struct heif_decoding_options*) = resolve("heif_decode_image");
    return f ? f(a0, a1, a2, a3, a4) : unavailable;
}

struct heif_decoding_options* heif_decoding_options_alloc(void) {
    struct heif_decoding_options* (*f)(void) = resolve("heif_decoding_options_alloc");
    return f ? f() : NULL;
}

void heif_decoding_options_free(struct heif_decoding_options* a0) {
    void (*f)(struct heif_decoding_options*) = resolve("heif_decoding_options_free");
    if (f) f(a0);
}

const char* heif_get_version(void) {
    const char* (*f)(void) = resolve("heif_get_version");
    return f ? f() : NULL;
}

enum heif_chroma heif_image_get_chroma_format(const struct heif_image* a0) {
    enum heif_chroma (*f)(const struct heif_image*) = resolve("heif_image_get_chroma_format");
    return f ? f(a0) : (enum heif_chroma)0;
}

int heif_image_get_height(const struct heif_image* a0, enum heif_channel a1) {
    int (*f)(const struct heif_image*, enum heif_channel) = resolve("heif_image_get_height");
    return f ? f(a0, a1) : 0;
}

const uint8_t* heif_image_get_plane_readonly(const struct heif_image* a0, enum heif_channel a1, int* a2) {
    const uint8_t* (*f)(const struct heif_image*, enum heif_channel, int*) = resolve("heif_image_get_plane_readonly");
    return f ? f(a0, a1, a2) : NULL;
}

int heif_image_get_width(const struct heif_image* a0, enum heif_channel a1) {
    int (*f)(const struct heif_image*, enum heif_channel) = resolve("heif_image_get_width");
    return f ? f(a0, a1) : 0;
}

enum heif_color_profile_type heif_image_handle_get_color_profile_type(const struct heif_image_handle* a0) {
    enum heif_color_profile_type (*f)(const struct heif_image_handle*) = resolve("heif_image_handle_get_color_profile_type");
    return f ? f(a0) : (enum heif_color_profile_type)0;
}

int heif_image_handle_get_luma_bits_per_pixel(const struct heif_image_handle* a0) {
    int (*f)(const struct heif_image_handle*) = resolve("heif_image_handle_get_luma_bits_per_pixel");
    return f ? f(a0) : 0;
}

struct heif_error heif_image_handle_get_raw_color_profile(const struct heif_image_handle* a0, void* a1) {
    struct heif_error (*f)(const struct heif_image_handle*, void*) = resolve("heif_image_handle_get_raw_color_profile");
    return f ? f(a0, a1) : unavailable;
}

size_t heif_image_handle_get_raw_color_profile_size(const struct heif_image_handle* a0) {
    size_t (*f)(const struct heif_image_handle*) = resolve("heif_image_handle_get_raw_color_profile_size");
    return f ? f(a0) : 0;
}

int heif_image_handle_has_alpha_channel(const struct heif_image_handle* a0) {
    int (*f)(const struct heif_image_handle*) = resolve("heif_image_handle_has_alpha_channel");
    return f ? f(a0) : 0;
}

void heif_image_handle_release(const struct heif_image_handle* a0) {
    void (*f)(const struct heif_image_handle*) = resolve("heif_image_handle_release");
    if (f) f(a0);
}

void heif_image_release(const struct heif_image* a0) {
    void (*f)(const struct heif_image*) = resolve("heif_image_release");
    if (f) f(a0);
}

// Metadata items of the primary image, for conversions that carry what the policy keeps (issue 16).
int heif_image_handle_get_number_of_metadata_blocks(const struct heif_image_handle* a0, const char* a1) {
    int (*f)(const struct heif_image_handle*, const char*) = resolve("heif_image_handle_get_number_of_metadata_blocks");
    return f ? f(a0, a1) : 0;
}

int heif_image_handle_get_list_of_metadata_block_IDs(const struct heif_image_handle* a0, const char* a1, heif_item_id* a2, int a3) {
    int (*f)(const struct heif_image_handle*, const char*, heif_item_id*, int) = resolve("heif_image_handle_get_list_of_metadata_block_IDs");
    return f ? f(a0, a1, a2, a3) : 0;
}

const char* heif_image_handle_get_metadata_type(const struct heif_image_handle* a0, heif_item_id a1) {
    const char* (*f)(const struct heif_image_handle*, heif_item_id) = resolve("heif_image_handle_get_metadata_type");
    return f ? f(a0, a1) : NULL;
}

const char* heif_image_handle_get_metadata_content_type(const struct heif_image_handle* a0, heif_item_id a1) {
    const char* (*f)(const struct heif_image_handle*, heif_item_id) = resolve("heif_image_handle_get_metadata_content_type");
    return f ? f(a0, a1) : NULL;
}

size_t heif_image_handle_get_metadata_size(const struct heif_image_handle* a0, heif_item_id a1) {
    size_t (*f)(const struct heif_image_handle*, heif_item_id) = resolve("heif_image_handle_get_metadata_size");
    return f ? f(a0, a1) : 0;
}

struct heif_error heif_image_handle_get_metadata(const struct heif_image_handle* a0, heif_item_id a1, void* a2) {
    struct heif_error (*f)(const struct heif_image_handle*, heif_item_id, void*) = resolve("heif_image_handle_get_metadata");
    return f ? f(a0, a1, a2) : unavailable;
}
