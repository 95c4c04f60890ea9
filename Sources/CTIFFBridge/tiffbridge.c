// SPDX-License-Identifier: GPL-3.0-or-later
#include "tiffbridge.h"

#include "lazy_library.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tiffio.h>

// libtiff through dlopen on first use (like libheif and LibRaw): most runs never meet a TIFF that needs
// decoding. Pointers are typed by libtiff's own prototypes; no symbol of libtiff's name is defined here, so
// a libtiff another library loads is never shadowed. Without libtiff.so.6 every call fails cleanly.
static struct lazy_library libtiff = LAZY_LIBRARY("libtiff.so.6");
#define LIBTIFF(name) ((__typeof__(&name))lazy_library_symbol(&libtiff, #name))

/// Largest decoded image, in bytes, the bridge agrees to allocate.
static const uint64_t most_bytes = (uint64_t)1 << 31;

/// A TIFF file in memory: the input (read-only) or the growing output.
struct memfile {
    uint8_t *data;
    size_t size, capacity, position;
    int writable;
    char *error;
    size_t error_size;
};

static int fail(struct memfile *m, const char *message) {
    if (m->error_size && !m->error[0]) snprintf(m->error, m->error_size, "%s", message);
    return -1;
}

static tmsize_t mem_read(thandle_t h, void *buffer, tmsize_t n) {
    struct memfile *m = h;
    if (n <= 0 || m->position >= m->size) return 0;
    size_t count = m->size - m->position < (size_t)n ? m->size - m->position : (size_t)n;
    memcpy(buffer, m->data + m->position, count);
    m->position += count;
    return (tmsize_t)count;
}

static tmsize_t mem_write(thandle_t h, void *buffer, tmsize_t n) {
    struct memfile *m = h;
    if (!m->writable || n < 0) return -1;
    size_t end = m->position + (size_t)n;
    if (end > m->capacity) {
        size_t capacity = m->capacity ? m->capacity : 65536;
        while (capacity < end) capacity *= 2;
        uint8_t *grown = realloc(m->data, capacity);
        if (!grown) return -1;
        m->data = grown;
        m->capacity = capacity;
    }
    // A seek past the end leaves a gap: zeros, not whatever the allocator had there.
    if (m->position > m->size) memset(m->data + m->size, 0, m->position - m->size);
    memcpy(m->data + m->position, buffer, (size_t)n);
    m->position = end;
    if (end > m->size) m->size = end;
    return n;
}

static toff_t mem_seek(thandle_t h, toff_t offset, int whence) {
    struct memfile *m = h;
    uint64_t base = whence == SEEK_CUR ? m->position : whence == SEEK_END ? m->size : 0;
    uint64_t target = base + offset;
    if (target > most_bytes * 2) return (toff_t)-1;
    m->position = (size_t)target;
    return target;
}

static int mem_close(thandle_t h) { (void)h; return 0; }
static toff_t mem_size(thandle_t h) { return ((struct memfile *)h)->size; }

static int mem_map(thandle_t h, void **base, toff_t *size) {
    struct memfile *m = h;
    if (m->writable) return 0;
    *base = m->data;
    *size = m->size;
    return 1;
}

static void mem_unmap(thandle_t h, void *base, toff_t size) { (void)h; (void)base; (void)size; }

static int on_error(TIFF *tif, void *user, const char *module, const char *format, va_list args) {
    (void)tif; (void)module;
    struct memfile *m = user;
    if (m->error_size && !m->error[0]) vsnprintf(m->error, m->error_size, format, args);
    return 1;
}

// Warnings (unknown tags, odd values) would go to standard error; the report says what matters.
static int on_warning(TIFF *tif, void *user, const char *module, const char *format, va_list args) {
    (void)tif; (void)user; (void)module; (void)format; (void)args;
    return 1;
}

static TIFF *open_memory(struct memfile *m, const char *mode) {
    TIFFOpenOptions *(*alloc)(void) = LIBTIFF(TIFFOpenOptionsAlloc);
    __typeof__(&TIFFClientOpenExt) client_open = LIBTIFF(TIFFClientOpenExt);
    if (!alloc || !client_open) {
        fail(m, "libtiff.so.6 could not be loaded");
        return NULL;
    }
    TIFFOpenOptions *options = alloc();
    if (!options) return NULL;
    LIBTIFF(TIFFOpenOptionsSetErrorHandlerExtR)(options, on_error, m);
    LIBTIFF(TIFFOpenOptionsSetWarningHandlerExtR)(options, on_warning, m);
    LIBTIFF(TIFFOpenOptionsSetMaxSingleMemAlloc)(options, (tmsize_t)most_bytes);
    TIFF *tif = client_open("memory", mode, m, mem_read, mem_write, mem_seek, mem_close, mem_size, mem_map, mem_unmap, options);
    LIBTIFF(TIFFOpenOptionsFree)(options);
    if (!tif) fail(m, "libtiff cannot open the data as a TIFF");
    return tif;
}

static void read_info(TIFF *tif, tiffbridge_image *info) {
    __typeof__(&TIFFGetField) get = LIBTIFF(TIFFGetField);
    __typeof__(&TIFFGetFieldDefaulted) defaulted = LIBTIFF(TIFFGetFieldDefaulted);
    memset(info, 0, sizeof *info);
    get(tif, TIFFTAG_IMAGEWIDTH, &info->width);
    get(tif, TIFFTAG_IMAGELENGTH, &info->height);
    defaulted(tif, TIFFTAG_BITSPERSAMPLE, &info->bits_per_sample);
    defaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &info->samples_per_pixel);
    defaulted(tif, TIFFTAG_SAMPLEFORMAT, &info->sample_format);
    defaulted(tif, TIFFTAG_PLANARCONFIG, &info->planar_config);
    defaulted(tif, TIFFTAG_COMPRESSION, &info->compression);
    defaulted(tif, TIFFTAG_FILLORDER, &info->fill_order);
    if (!get(tif, TIFFTAG_PHOTOMETRIC, &info->photometric)) info->photometric = info->samples_per_pixel >= 3 ? 2 : 1;
    // The predictor is a field of the LZW/Deflate codecs only.
    if (!get(tif, TIFFTAG_PREDICTOR, &info->predictor)) info->predictor = 1;
    uint16_t count = 0, *extra = NULL;
    if (defaulted(tif, TIFFTAG_EXTRASAMPLES, &count, &extra) && extra) {
        info->extra_count = count < 8 ? count : 8;
        memcpy(info->extra_samples, extra, info->extra_count * sizeof(uint16_t));
    }
    defaulted(tif, TIFFTAG_ORIENTATION, &info->orientation);
    if (info->orientation < 1 || info->orientation > 8) info->orientation = 1;
    info->big_endian = LIBTIFF(TIFFIsBigEndian)(tif) != 0;
    info->tiled = LIBTIFF(TIFFIsTiled)(tif) != 0;
}

/// A copy of the ICC profile, when asked for and present.
static void copy_icc(TIFF *tif, uint8_t **icc, size_t *icc_length) {
    if (!icc) return;
    *icc = NULL;
    *icc_length = 0;
    uint32_t length = 0;
    void *profile = NULL;
    if (LIBTIFF(TIFFGetField)(tif, TIFFTAG_ICCPROFILE, &length, &profile) && profile && length) {
        *icc = malloc(length);
        if (*icc) { memcpy(*icc, profile, length); *icc_length = length; }
    }
}

static int sized(struct memfile *m, uint64_t bytes) {
    if (bytes == 0 || bytes > most_bytes) return fail(m, "the image is empty or larger than metascrub decodes (2 GiB)");
    return 0;
}

int tiffbridge_decode_samples(const uint8_t *data, size_t size, tiffbridge_image *info, uint8_t **pixels,
                              size_t *length, uint8_t **icc, size_t *icc_length, char *error, size_t error_size) {
    struct memfile m = {(uint8_t *)data, size, size, 0, 0, error, error_size};
    if (error_size) error[0] = 0;
    *pixels = NULL;
    TIFF *tif = open_memory(&m, "r");
    if (!tif) return -1;
    read_info(tif, info);
    int rc = -1;
    uint8_t *out = NULL;
    if (info->tiled || info->planar_config != PLANARCONFIG_CONTIG || (info->bits_per_sample != 8 && info->bits_per_sample != 16)) {
        fail(&m, "only stripped, interleaved 8- or 16-bit images are decoded to samples");
        goto done;
    }
    uint64_t row = (uint64_t)info->width * info->samples_per_pixel * (info->bits_per_sample / 8);
    uint64_t total = row * info->height;
    if (sized(&m, total) != 0) goto done;
    uint32_t rows_per_strip = 0;
    LIBTIFF(TIFFGetFieldDefaulted)(tif, TIFFTAG_ROWSPERSTRIP, &rows_per_strip);
    if (rows_per_strip == 0 || rows_per_strip > info->height) rows_per_strip = info->height;
    out = malloc(total);
    if (!out) { fail(&m, "out of memory"); goto done; }
    uint32_t strips = LIBTIFF(TIFFNumberOfStrips)(tif);
    __typeof__(&TIFFReadEncodedStrip) read_strip = LIBTIFF(TIFFReadEncodedStrip);
    for (uint32_t y = 0, strip = 0; y < info->height; y += rows_per_strip, strip++) {
        uint32_t rows = info->height - y < rows_per_strip ? info->height - y : rows_per_strip;
        tmsize_t want = (tmsize_t)(rows * row);
        if (strip >= strips || read_strip(tif, strip, out + y * row, want) != want) {
            fail(&m, "a strip does not decode to its rows");
            goto done;
        }
    }
    copy_icc(tif, icc, icc_length);
    *pixels = out;
    *length = (size_t)total;
    out = NULL;
    rc = 0;
done:
    free(out);
    LIBTIFF(TIFFClose)(tif);
    return rc;
}

int tiffbridge_decode_rgba(const uint8_t *data, size_t size, tiffbridge_image *info, uint8_t **pixels,
                           size_t *length, uint8_t **icc, size_t *icc_length, char *error, size_t error_size) {
    struct memfile m = {(uint8_t *)data, size, size, 0, 0, error, error_size};
    if (error_size) error[0] = 0;
    *pixels = NULL;
    TIFF *tif = open_memory(&m, "r");
    if (!tif) return -1;
    read_info(tif, info);
    int rc = -1;
    uint32_t *raster = NULL;
    char message[1024] = {0};
    TIFFRGBAImage image;
    uint64_t count = (uint64_t)info->width * info->height;
    if (sized(&m, count * 4) != 0) goto done;
    if (!LIBTIFF(TIFFRGBAImageOK)(tif, message) || !LIBTIFF(TIFFRGBAImageBegin)(&image, tif, 1, message)) {
        fail(&m, message[0] ? message : "libtiff cannot render this image");
        goto done;
    }
    // Stored row order: the caller applies the Orientation tag itself (libtiff's RGBA reader only flips).
    image.orientation = ORIENTATION_TOPLEFT;
    image.req_orientation = ORIENTATION_TOPLEFT;
    raster = malloc(count * 4);
    int got = raster ? LIBTIFF(TIFFRGBAImageGet)(&image, raster, info->width, info->height) : 0;
    LIBTIFF(TIFFRGBAImageEnd)(&image);
    if (!got) { fail(&m, raster ? "libtiff could not render the image" : "out of memory"); goto done; }
    uint8_t *out = (uint8_t *)raster;
    for (uint64_t i = 0; i < count; i++) {
        uint32_t v = raster[i];
        out[i * 4] = TIFFGetR(v); out[i * 4 + 1] = TIFFGetG(v); out[i * 4 + 2] = TIFFGetB(v); out[i * 4 + 3] = TIFFGetA(v);
    }
    copy_icc(tif, icc, icc_length);
    *pixels = out;
    *length = (size_t)(count * 4);
    raster = NULL;
    rc = 0;
done:
    free(raster);
    LIBTIFF(TIFFClose)(tif);
    return rc;
}

int tiffbridge_encode_samples(const tiffbridge_image *info, const uint8_t *pixels, size_t length, uint8_t **out,
                              size_t *out_length, char *error, size_t error_size) {
    struct memfile m = {NULL, 0, 0, 0, 1, error, error_size};
    if (error_size) error[0] = 0;
    *out = NULL;
    uint64_t row = (uint64_t)info->width * info->samples_per_pixel * (info->bits_per_sample / 8);
    if (row * info->height != length || sized(&m, length) != 0) return fail(&m, "pixel buffer does not match the image size");
    TIFF *tif = open_memory(&m, info->big_endian ? "wb" : "wl");
    if (!tif) return -1;
    int rc = -1;
    uint8_t *scratch = NULL;
    __typeof__(&TIFFSetField) set = LIBTIFF(TIFFSetField);
    int ok = set(tif, TIFFTAG_IMAGEWIDTH, info->width) && set(tif, TIFFTAG_IMAGELENGTH, info->height)
        && set(tif, TIFFTAG_BITSPERSAMPLE, info->bits_per_sample) && set(tif, TIFFTAG_SAMPLESPERPIXEL, info->samples_per_pixel)
        && set(tif, TIFFTAG_PHOTOMETRIC, info->photometric) && set(tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG)
        && set(tif, TIFFTAG_COMPRESSION, info->compression) && set(tif, TIFFTAG_SAMPLEFORMAT, info->sample_format)
        && (info->extra_count == 0 || set(tif, TIFFTAG_EXTRASAMPLES, info->extra_count, info->extra_samples))
        && (info->predictor <= 1 || set(tif, TIFFTAG_PREDICTOR, info->predictor));
    if (!ok) { fail(&m, "libtiff refused the image's coding"); goto done; }
    uint32_t rows_per_strip = LIBTIFF(TIFFDefaultStripSize)(tif, 0);
    if (rows_per_strip == 0 || rows_per_strip > info->height) rows_per_strip = info->height;
    if (!set(tif, TIFFTAG_ROWSPERSTRIP, rows_per_strip)) { fail(&m, "libtiff refused the strip size"); goto done; }
    // Codecs may difference or byte-swap the buffer they are given: each strip goes through a copy.
    scratch = malloc(row * rows_per_strip);
    if (!scratch) { fail(&m, "out of memory"); goto done; }
    __typeof__(&TIFFWriteEncodedStrip) write_strip = LIBTIFF(TIFFWriteEncodedStrip);
    for (uint32_t y = 0, strip = 0; y < info->height; y += rows_per_strip, strip++) {
        uint32_t rows = info->height - y < rows_per_strip ? info->height - y : rows_per_strip;
        memcpy(scratch, pixels + y * row, rows * row);
        if (write_strip(tif, strip, scratch, (tmsize_t)(rows * row)) < 0) { fail(&m, "a strip could not be encoded"); goto done; }
    }
    if (!LIBTIFF(TIFFWriteDirectory)(tif)) { fail(&m, "libtiff could not write the directory"); goto done; }
    rc = 0;
done:
    free(scratch);
    LIBTIFF(TIFFClose)(tif);
    if (rc == 0 && error_size && error[0]) rc = -1;
    if (rc == 0) {
        *out = m.data;
        *out_length = m.size;
    } else {
        free(m.data);
    }
    return rc;
}

const char *tiffbridge_version(void) {
    const char *(*version)(void) = LIBTIFF(TIFFGetVersion);
    return version ? version() : NULL;
}

void tiffbridge_free(void *buffer) { free(buffer); }
