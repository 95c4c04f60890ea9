// SPDX-License-Identifier: GPL-3.0-or-later
// A small C API over libtiff (Debian libtiff6), in memory only: decode a TIFF's first image to its stored
// samples or to 8-bit RGBA, and encode samples with a given compression (issue 16: baking a TIFF's orientation
// and converting TIFF to JPEG/PNG). libtiff is opened with dlopen on first use, like libheif and LibRaw.
#ifndef METASCRUB_TIFFBRIDGE_H
#define METASCRUB_TIFFBRIDGE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// How a TIFF image's samples are coded: what an encode must reproduce.
typedef struct tiffbridge_image {
    uint32_t width, height;
    uint16_t bits_per_sample, samples_per_pixel, sample_format, photometric;
    uint16_t compression, predictor, planar_config, fill_order;
    uint16_t extra_count;
    uint16_t extra_samples[8];
    /// 1 when the file is big-endian ("MM"); an encode writes the same byte order.
    int32_t big_endian;
    int32_t tiled;
    /// The Orientation tag (1 when absent): decoding never applies it.
    uint16_t orientation;
} tiffbridge_image;

/// Every call returns 0 on success and -1 on failure, with libtiff's message (or the bridge's) in `error`.
/// Buffers handed out are released with `tiffbridge_free`.

/// The first image's samples as stored: rows top to bottom in file order (no orientation applied),
/// interleaved, 16-bit samples in the machine's byte order. Strips, chunky (interleaved) samples only.
/// `icc` (may be NULL) gets the embedded ICC profile, if any.
int tiffbridge_decode_samples(const uint8_t *data, size_t size, tiffbridge_image *info, uint8_t **pixels,
                              size_t *length, uint8_t **icc, size_t *icc_length, char *error, size_t error_size);

/// The first image as 8-bit RGBA in stored row order (no orientation applied): any photometric interpretation
/// and compression libtiff's RGBA interface reads. `icc` gets the embedded ICC profile, if any.
int tiffbridge_decode_rgba(const uint8_t *data, size_t size, tiffbridge_image *info, uint8_t **pixels,
                           size_t *length, uint8_t **icc, size_t *icc_length, char *error, size_t error_size);

/// A single-image TIFF holding `pixels` (laid out as `tiffbridge_decode_samples` gives them) coded as `info`
/// says, in `info->big_endian`'s byte order, with libtiff's default strip size.
int tiffbridge_encode_samples(const tiffbridge_image *info, const uint8_t *pixels, size_t length, uint8_t **out,
                              size_t *out_length, char *error, size_t error_size);

/// "LIBTIFF, Version 4.5.0", or NULL when libtiff cannot be loaded.
const char *tiffbridge_version(void);

void tiffbridge_free(void *buffer);

#ifdef __cplusplus
}
#endif

#endif
