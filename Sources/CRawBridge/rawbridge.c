// SPDX-License-Identifier: GPL-3.0-or-later
#include "rawbridge.h"

#include <libraw/libraw.h>
#include "lazy_library.h"
#include <stdio.h>
#include <string.h>

// LibRaw through dlopen on first use (like libheif, issue 19): linking it would load libraw_r, lcms2 and libgomp
// at every process start, although most runs never meet a raw. Only functions are resolved; the data structures
// come from the headers of the same Debian package. Without libraw_r.so.20 every call fails cleanly.
static struct lazy_library libraw = LAZY_LIBRARY("libraw_r.so.20");

static void *resolve(const char *name) { return lazy_library_symbol(&libraw, name); }

static libraw_data_t *raw_init(unsigned flags) {
    libraw_data_t *(*f)(unsigned) = (libraw_data_t *(*)(unsigned))resolve("libraw_init");
    return f ? f(flags) : NULL;
}

static int raw_call(const char *name, libraw_data_t *raw) {
    int (*f)(libraw_data_t *) = (int (*)(libraw_data_t *))resolve(name);
    return f ? f(raw) : LIBRAW_UNSPECIFIED_ERROR;
}

static int raw_open_file(libraw_data_t *raw, const char *path) {
    int (*f)(libraw_data_t *, const char *) = (int (*)(libraw_data_t *, const char *))resolve("libraw_open_file");
    return f ? f(raw, path) : LIBRAW_UNSPECIFIED_ERROR;
}

static int raw_open_buffer(libraw_data_t *raw, void *data, size_t size) {
    int (*f)(libraw_data_t *, void *, size_t) = (int (*)(libraw_data_t *, void *, size_t))resolve("libraw_open_buffer");
    return f ? f(raw, data, size) : LIBRAW_UNSPECIFIED_ERROR;
}

static void raw_close(libraw_data_t *raw) {
    void (*f)(libraw_data_t *) = (void (*)(libraw_data_t *))resolve("libraw_close");
    if (f) f(raw);
}

static const char *raw_strerror(int code) {
    const char *(*f)(int) = (const char *(*)(int))resolve("libraw_strerror");
    return f ? f(code) : "libraw_r.so.20 could not be loaded";
}

static uint64_t fnv(uint64_t h, const void *data, size_t n) {
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

static const uint64_t fnvBasis = 0xcbf29ce484222325ULL;

static int finish(libraw_data_t *raw, int rc, rawbridge_fingerprint *out) {
    if (rc == LIBRAW_SUCCESS) rc = raw_call("libraw_unpack", raw);
    if (rc != LIBRAW_SUCCESS) {
        snprintf(out->error, sizeof out->error, "LibRaw: %s", raw_strerror(rc));
        raw_close(raw);
        return -1;
    }
    const libraw_rawdata_t *d = &raw->rawdata;
    const libraw_image_sizes_t *s = &raw->rawdata.sizes;
    const void *buffer = d->raw_image ? (const void *)d->raw_image
        : d->color4_image ? (const void *)d->color4_image
        : d->color3_image ? (const void *)d->color3_image
        : d->float_image ? (const void *)d->float_image
        : d->float3_image ? (const void *)d->float3_image
        : (const void *)d->float4_image;
    if (buffer == NULL || s->raw_pitch == 0) {
        snprintf(out->error, sizeof out->error, "LibRaw: no sensor data after unpacking");
        raw_close(raw);
        return -1;
    }
    out->pixels = fnv(fnvBasis, buffer, (size_t)s->raw_pitch * s->raw_height);
    out->raw_width = s->raw_width;
    out->raw_height = s->raw_height;
    const libraw_colordata_t *c = &d->color;
    uint64_t h = fnvBasis;
    h = fnv(h, c->cblack, sizeof c->cblack);
    h = fnv(h, &c->black, sizeof c->black);
    h = fnv(h, &c->maximum, sizeof c->maximum);
    h = fnv(h, c->cam_mul, sizeof c->cam_mul);
    h = fnv(h, c->pre_mul, sizeof c->pre_mul);
    h = fnv(h, c->rgb_cam, sizeof c->rgb_cam);
    h = fnv(h, c->cam_xyz, sizeof c->cam_xyz);
    h = fnv(h, c->curve, sizeof c->curve);
    h = fnv(h, &d->iparams.filters, sizeof d->iparams.filters);
    h = fnv(h, &d->iparams.colors, sizeof d->iparams.colors);
    h = fnv(h, &d->iparams.xtrans, sizeof d->iparams.xtrans);
    h = fnv(h, &s->pixel_aspect, sizeof s->pixel_aspect);
    // The identified camera's name is not hashed: whatever LibRaw derives from it (decoder, matrices, levels,
    // geometry) is, so a make or model a raw does not need can go (a DNG carries its own matrices).
    // Field by field: the struct has padding whose bytes are not defined.
    unsigned geometry[] = {s->raw_height, s->raw_width, s->height, s->width, s->top_margin, s->left_margin, s->raw_pitch, (unsigned)s->flip};
    h = fnv(h, geometry, sizeof geometry);
    out->colour = h;
    raw_close(raw);
    return 0;
}

static libraw_data_t *start(rawbridge_fingerprint *out) {
    memset(out, 0, sizeof *out);
    libraw_data_t *raw = raw_init(LIBRAW_OPIONS_NO_DATAERR_CALLBACK);
    if (raw == NULL) snprintf(out->error, sizeof out->error, "LibRaw: cannot initialise (is libraw_r.so.20 installed?)");
    return raw;
}

static int identified(libraw_data_t *raw, int rc, rawbridge_fingerprint *out) {
    if (rc != LIBRAW_SUCCESS) snprintf(out->error, sizeof out->error, "LibRaw: %s", raw_strerror(rc));
    raw_close(raw);
    return rc == LIBRAW_SUCCESS ? 0 : -1;
}

// Opens the file at `path`, or else the buffer, on a fresh handle; `then` reads the result and closes the handle.
static int opened(const char *path, const void *data, size_t size, rawbridge_fingerprint *out,
                  int (*then)(libraw_data_t *, int, rawbridge_fingerprint *)) {
    libraw_data_t *raw = start(out);
    if (raw == NULL) return -1;
    return then(raw, path ? raw_open_file(raw, path) : raw_open_buffer(raw, (void *)data, size), out);
}

int rawbridge_fingerprint_file(const char *path, rawbridge_fingerprint *out) {
    return opened(path, NULL, 0, out, finish);
}

int rawbridge_fingerprint_buffer(const void *data, size_t size, rawbridge_fingerprint *out) {
    return opened(NULL, data, size, out, finish);
}

int rawbridge_identify_file(const char *path, rawbridge_fingerprint *out) {
    return opened(path, NULL, 0, out, identified);
}

int rawbridge_identify_buffer(const void *data, size_t size, rawbridge_fingerprint *out) {
    return opened(NULL, data, size, out, identified);
}
