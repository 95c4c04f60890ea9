// SPDX-License-Identifier: GPL-3.0-or-later
// libheif through dlopen on first use. Linking it pulled in libde265, x265, dav1d and libaom, whose load-time
// initialisers were a fifth of every process start (scripts/benchmark/findings.md), although most runs never
// open a HEIF. These definitions stand in for the functions metascrub calls, with libheif's own prototypes,
// so the Swift code calls libheif as before; each resolves its symbol when called. Without libheif.so.1 the
// calls fail like libheif's own failures (an error struct, NULL, 0), never a crash.
#include "lazy_library.h"
#include <stddef.h>
#include "cheif.h"

static struct lazy_library libheif = LAZY_LIBRARY("libheif.so.1");

static void *resolve(const char *name) { return lazy_library_symbol(&libheif, name); }

static const struct heif_error unavailable = {
    heif_error_Unsupported_feature, heif_suberror_Unspecified, "libheif.so.1 could not be loaded"};

FORWARD(struct heif_context*, heif_context_alloc, (void), (), NULL)
FORWARD_VOID(heif_context_free, (struct heif_context* a0), (a0))
FORWARD(struct heif_error, heif_context_get_primary_image_handle, (struct heif_context* a0, struct heif_image_handle** a1), (a0, a1), unavailable)
FORWARD(struct heif_error, heif_context_read_from_file, (struct heif_context* a0, const char* a1, const struct heif_reading_options* a2), (a0, a1, a2), unavailable)
FORWARD(struct heif_error, heif_context_read_from_memory, (struct heif_context* a0, const void* a1, size_t a2, const struct heif_reading_options* a3), (a0, a1, a2, a3), unavailable)
FORWARD_VOID(heif_context_set_maximum_image_size_limit, (struct heif_context* a0, int a1), (a0, a1))
FORWARD(struct heif_error, heif_decode_image, (const struct heif_image_handle* a0, struct heif_image** a1, enum heif_colorspace a2, enum heif_chroma a3, const struct heif_decoding_options* a4), (a0, a1, a2, a3, a4), unavailable)
FORWARD(struct heif_decoding_options*, heif_decoding_options_alloc, (void), (), NULL)
FORWARD_VOID(heif_decoding_options_free, (struct heif_decoding_options* a0), (a0))
FORWARD(const char*, heif_get_version, (void), (), NULL)
FORWARD(enum heif_chroma, heif_image_get_chroma_format, (const struct heif_image* a0), (a0), (enum heif_chroma)0)
FORWARD(int, heif_image_get_height, (const struct heif_image* a0, enum heif_channel a1), (a0, a1), 0)
FORWARD(const uint8_t*, heif_image_get_plane_readonly, (const struct heif_image* a0, enum heif_channel a1, int* a2), (a0, a1, a2), NULL)
FORWARD(int, heif_image_get_width, (const struct heif_image* a0, enum heif_channel a1), (a0, a1), 0)
FORWARD(enum heif_color_profile_type, heif_image_handle_get_color_profile_type, (const struct heif_image_handle* a0), (a0), (enum heif_color_profile_type)0)
FORWARD(int, heif_image_handle_get_luma_bits_per_pixel, (const struct heif_image_handle* a0), (a0), 0)
FORWARD(int, heif_image_handle_get_width, (const struct heif_image_handle* a0), (a0), 0)
FORWARD(int, heif_image_handle_get_height, (const struct heif_image_handle* a0), (a0), 0)
FORWARD(struct heif_error, heif_image_handle_get_raw_color_profile, (const struct heif_image_handle* a0, void* a1), (a0, a1), unavailable)
FORWARD(size_t, heif_image_handle_get_raw_color_profile_size, (const struct heif_image_handle* a0), (a0), 0)
FORWARD(int, heif_image_handle_has_alpha_channel, (const struct heif_image_handle* a0), (a0), 0)
FORWARD_VOID(heif_image_handle_release, (const struct heif_image_handle* a0), (a0))
FORWARD_VOID(heif_image_release, (const struct heif_image* a0), (a0))

// Metadata items of the primary image, for conversions that carry what the policy keeps (issue 16).
FORWARD(int, heif_image_handle_get_number_of_metadata_blocks, (const struct heif_image_handle* a0, const char* a1), (a0, a1), 0)
FORWARD(int, heif_image_handle_get_list_of_metadata_block_IDs, (const struct heif_image_handle* a0, const char* a1, heif_item_id* a2, int a3), (a0, a1, a2, a3), 0)
FORWARD(const char*, heif_image_handle_get_metadata_type, (const struct heif_image_handle* a0, heif_item_id a1), (a0, a1), NULL)
FORWARD(const char*, heif_image_handle_get_metadata_content_type, (const struct heif_image_handle* a0, heif_item_id a1), (a0, a1), NULL)
FORWARD(size_t, heif_image_handle_get_metadata_size, (const struct heif_image_handle* a0, heif_item_id a1), (a0, a1), 0)
FORWARD(struct heif_error, heif_image_handle_get_metadata, (const struct heif_image_handle* a0, heif_item_id a1, void* a2), (a0, a1, a2), unavailable)

// The threaded HEVC plugin (hevc_decoder.c) builds its pictures with these, and the YCbCr conversion path
// (issue 16) reads planes and the nclx colour description.
FORWARD(struct heif_error, heif_register_decoder_plugin, (const struct heif_decoder_plugin* a0), (a0), unavailable)
FORWARD(struct heif_error, heif_image_create, (int a0, int a1, enum heif_colorspace a2, enum heif_chroma a3, struct heif_image** a4), (a0, a1, a2, a3, a4), unavailable)
FORWARD(struct heif_error, heif_image_add_plane, (struct heif_image* a0, enum heif_channel a1, int a2, int a3, int a4), (a0, a1, a2, a3, a4), unavailable)
FORWARD(uint8_t*, heif_image_get_plane, (struct heif_image* a0, enum heif_channel a1, int* a2), (a0, a1, a2), NULL)
FORWARD(enum heif_colorspace, heif_image_get_colorspace, (const struct heif_image* a0), (a0), heif_colorspace_undefined)
FORWARD(int, heif_image_get_bits_per_pixel_range, (const struct heif_image* a0, enum heif_channel a1), (a0, a1), -1)
FORWARD(struct heif_error, heif_image_handle_get_nclx_color_profile, (const struct heif_image_handle* a0, struct heif_color_profile_nclx** a1), (a0, a1), unavailable)
FORWARD_VOID(heif_nclx_color_profile_free, (struct heif_color_profile_nclx* a0), (a0))
