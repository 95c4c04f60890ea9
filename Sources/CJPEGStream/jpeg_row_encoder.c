// SPDX-License-Identifier: GPL-3.0-or-later
// libjpeg's compressor fed row by row. Errors jump back to the call that started the work (see jpeg_stream.c).
#include "jpeg_stream.h"
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>

struct jpeg_row_encoder {
    struct jpeg_compress_struct info;
    struct jpeg_error_mgr errors;
    jmp_buf escape;
    char message[JMSG_LENGTH_MAX];
    unsigned char *buffer;
    unsigned long size;
    int finished;
};

static void escape(j_common_ptr info) {
    struct jpeg_row_encoder *encoder = (struct jpeg_row_encoder *)info->client_data;
    info->err->format_message(info, encoder->message);
    longjmp(encoder->escape, 1);
}

static void copy_error(const struct jpeg_row_encoder *encoder, char error[200]) {
    if (!error) return;
    strncpy(error, encoder->message, 199);
    error[199] = 0;
}

struct jpeg_row_encoder *jpeg_row_encoder_begin(int width, int height, int quality, int h_sampling, int v_sampling,
                                                char error[200]) {
    struct jpeg_row_encoder *encoder = calloc(1, sizeof *encoder);
    if (!encoder) return NULL;
    encoder->info.err = jpeg_std_error(&encoder->errors);
    encoder->errors.error_exit = escape;
    encoder->info.client_data = encoder;
    if (setjmp(encoder->escape)) {
        copy_error(encoder, error);
        jpeg_row_encoder_free(encoder);
        return NULL;
    }
    jpeg_create_compress(&encoder->info);
    jpeg_mem_dest(&encoder->info, &encoder->buffer, &encoder->size);
    encoder->info.image_width = (JDIMENSION)width;
    encoder->info.image_height = (JDIMENSION)height;
    encoder->info.input_components = 3;
    encoder->info.in_color_space = JCS_RGB;
    jpeg_set_defaults(&encoder->info);
    jpeg_set_quality(&encoder->info, quality, TRUE);
    encoder->info.dct_method = JDCT_ISLOW;
    encoder->info.comp_info[0].h_samp_factor = h_sampling;
    encoder->info.comp_info[0].v_samp_factor = v_sampling;
    for (int c = 1; c < 3; c++) encoder->info.comp_info[c].h_samp_factor = encoder->info.comp_info[c].v_samp_factor = 1;
    jpeg_start_compress(&encoder->info, TRUE);
    return encoder;
}

int jpeg_row_encoder_write(struct jpeg_row_encoder *encoder, const uint8_t *rgb, int rows, char error[200]) {
    if (setjmp(encoder->escape)) {
        copy_error(encoder, error);
        return -1;
    }
    size_t row = (size_t)encoder->info.image_width * 3;
    for (int i = 0; i < rows; i++) {
        JSAMPROW line = (JSAMPROW)(rgb + (size_t)i * row);
        jpeg_write_scanlines(&encoder->info, &line, 1);
    }
    return 0;
}

int jpeg_row_encoder_finish(struct jpeg_row_encoder *encoder, uint8_t **jpeg, unsigned long *size, char error[200]) {
    if (setjmp(encoder->escape)) {
        copy_error(encoder, error);
        return -1;
    }
    jpeg_finish_compress(&encoder->info);
    encoder->finished = 1;
    *jpeg = encoder->buffer;
    *size = encoder->size;
    encoder->buffer = NULL;  // now the caller's
    return 0;
}

void jpeg_row_encoder_free(struct jpeg_row_encoder *encoder) {
    if (!encoder) return;
    jpeg_destroy_compress(&encoder->info);
    free(encoder->buffer);
    free(encoder);
}
