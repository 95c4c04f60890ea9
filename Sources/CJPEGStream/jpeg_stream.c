// SPDX-License-Identifier: GPL-3.0-or-later
// libjpeg reports errors through error_exit, which by default ends the process; here it jumps back to the call
// that started the work, which returns an error instead.
#include "jpeg_stream.h"
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>

struct jpeg_stream {
    struct jpeg_decompress_struct info;
    struct jpeg_error_mgr errors;
    jmp_buf escape;
    char message[JMSG_LENGTH_MAX];
};

static void escape(j_common_ptr info) {
    struct jpeg_stream *stream = (struct jpeg_stream *)info->client_data;
    info->err->format_message(info, stream->message);
    longjmp(stream->escape, 1);
}

// Warnings (a corrupt entropy segment libjpeg can step over) are failures too: a verification must not pass
// on a JPEG that only decodes with help.
static void warning(j_common_ptr info, int level) {
    if (level < 0) escape(info);
}

static void copy_error(const struct jpeg_stream *stream, char error[200]) {
    if (!error) return;
    strncpy(error, stream->message, 199);
    error[199] = 0;
}

struct jpeg_stream *jpeg_stream_open(const uint8_t *data, size_t size, char error[200]) {
    struct jpeg_stream *stream = calloc(1, sizeof *stream);
    if (!stream) return NULL;
    stream->info.err = jpeg_std_error(&stream->errors);
    stream->errors.error_exit = escape;
    stream->errors.emit_message = warning;
    stream->info.client_data = stream;
    if (setjmp(stream->escape)) {
        copy_error(stream, error);
        jpeg_destroy_decompress(&stream->info);
        free(stream);
        return NULL;
    }
    jpeg_create_decompress(&stream->info);
    jpeg_mem_src(&stream->info, data, (unsigned long)size);
    jpeg_read_header(&stream->info, TRUE);
    stream->info.out_color_space = JCS_RGB;
    stream->info.dct_method = JDCT_ISLOW;
    jpeg_start_decompress(&stream->info);
    if (stream->info.output_components != 3) {
        snprintf(stream->message, sizeof stream->message, "decodes to %d components, not RGB", stream->info.output_components);
        copy_error(stream, error);
        jpeg_destroy_decompress(&stream->info);
        free(stream);
        return NULL;
    }
    return stream;
}

int jpeg_stream_width(const struct jpeg_stream *stream) { return (int)stream->info.output_width; }

int jpeg_stream_height(const struct jpeg_stream *stream) { return (int)stream->info.output_height; }

int jpeg_stream_read(struct jpeg_stream *stream, uint8_t *out, int rows, char error[200]) {
    if (setjmp(stream->escape)) {
        copy_error(stream, error);
        return -1;
    }
    int done = 0;
    size_t row = (size_t)stream->info.output_width * 3;
    while (done < rows && stream->info.output_scanline < stream->info.output_height) {
        JSAMPROW line = out + (size_t)done * row;
        done += (int)jpeg_read_scanlines(&stream->info, &line, 1);
    }
    return done;
}

void jpeg_stream_close(struct jpeg_stream *stream) {
    if (!stream) return;
    // Not jpeg_finish_decompress: the caller may stop early, and nothing after the last row is needed.
    jpeg_destroy_decompress(&stream->info);
    free(stream);
}
