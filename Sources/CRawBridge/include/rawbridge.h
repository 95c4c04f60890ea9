// SPDX-License-Identifier: GPL-3.0-or-later
// A small C API over LibRaw (Debian libraw-dev, thread-safe libraw_r): decode a camera raw and fingerprint
// what a raw converter gets from it, so a cleaned raw can be proven to decode exactly as the original did.
#ifndef METASCRUB_RAWBRIDGE_H
#define METASCRUB_RAWBRIDGE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rawbridge_fingerprint {
    /// FNV-1a 64 of the unpacked sensor data (raw_image, color3/color4 or float buffers, row by row).
    uint64_t pixels;
    /// FNV-1a 64 of what colour processing reads: black levels, white level, camera and daylight multipliers,
    /// colour matrices, CFA pattern, sizes and margins, make and model as identified.
    uint64_t colour;
    int32_t raw_width, raw_height;
    /// LibRaw's message when the call failed.
    char error[160];
} rawbridge_fingerprint;

/// Whether LibRaw recognises the data as a raw it supports (open and identify only, no decoding): 0 when it
/// does, -1 otherwise (then `out->error` says why).
int rawbridge_identify_file(const char *path, rawbridge_fingerprint *out);
int rawbridge_identify_buffer(const void *data, size_t size, rawbridge_fingerprint *out);

/// Each returns 0 on success, -1 when LibRaw cannot open or unpack the data (then `out->error` says why).
int rawbridge_fingerprint_file(const char *path, rawbridge_fingerprint *out);
int rawbridge_fingerprint_buffer(const void *data, size_t size, rawbridge_fingerprint *out);

#ifdef __cplusplus
}
#endif

#endif
