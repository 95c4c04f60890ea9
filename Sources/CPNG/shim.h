// libpng (Debian libpng-dev 1.6.x). Use ONLY the simplified API (png_image_*): the low-level API reports
// errors by longjmp (or abort), which Swift cannot survive. Errors of the simplified API land in image.message.
#ifndef METASCRUB_CPNG_SHIM_H
#define METASCRUB_CPNG_SHIM_H
#include <png.h>

// Compound format macros are not imported by Swift; expose them as functions.
static inline png_uint_32 cpng_format_rgba(void) { return PNG_FORMAT_RGBA; }
static inline png_uint_32 cpng_format_rgb(void) { return PNG_FORMAT_RGB; }
static inline png_uint_32 cpng_format_gray(void) { return PNG_FORMAT_GRAY; }
static inline png_uint_32 cpng_format_linear_rgb_alpha(void) { return PNG_FORMAT_LINEAR_RGB_ALPHA; }
static inline png_uint_32 cpng_format_flag_linear(void) { return PNG_FORMAT_FLAG_LINEAR; }
static inline png_uint_32 cpng_image_version(void) { return PNG_IMAGE_VERSION; }
#endif
