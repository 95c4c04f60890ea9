// SPDX-License-Identifier: GPL-3.0-or-later
// A JPEG's own coding read back (quantisation tables, sampling factors, table numbers) and used to encode other
// pixels, so a re-encode keeps the source's quality instead of an IJG quality estimated from it (issue 16).
// Errors jump back to the call that started the work (see jpeg_stream.c).
#include "jpeg_stream.h"
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>

struct escape_errors {
    struct jpeg_error_mgr errors;
    jmp_buf escape;
    char message[JMSG_LENGTH_MAX];
};

static void escape(j_common_ptr info) {
    struct escape_errors *e = (struct escape_errors *)info->client_data;
    info->err->format_message(info, e->message);
    longjmp(e->escape, 1);
}

static void copy_error(const char *message, char error[200]) {
    if (!error) return;
    strncpy(error, message, 199);
    error[199] = 0;
}

int jpeg_read_coding(const uint8_t *data, size_t size, struct jpeg_coding *coding, char error[200]) {
    struct jpeg_decompress_struct info;
    struct escape_errors e;
    memset(coding, 0, sizeof *coding);
    memset(&e, 0, sizeof e);
    info.err = jpeg_std_error(&e.errors);
    e.errors.error_exit = escape;
    info.client_data = &e;
    if (setjmp(e.escape)) {
        copy_error(e.message, error);
        jpeg_destroy_decompress(&info);
        return -1;
    }
    jpeg_create_decompress(&info);
    jpeg_mem_src(&info, data, (unsigned long)size);
    jpeg_read_header(&info, TRUE);
    const char *refusal = NULL;
    if (info.data_precision != 8) refusal = "not 8-bit";
    else if (info.arith_code) refusal = "arithmetic coded";
    else if (!(info.jpeg_color_space == JCS_YCbCr && info.num_components == 3) &&
             !(info.jpeg_color_space == JCS_GRAYSCALE && info.num_components == 1))
        refusal = "not YCbCr or greyscale";
    if (refusal) {
        snprintf(e.message, sizeof e.message, "%s", refusal);
        copy_error(e.message, error);
        jpeg_destroy_decompress(&info);
        return 1;
    }
    coding->components = info.num_components;
    coding->progressive = info.progressive_mode ? 1 : 0;
    for (int c = 0; c < info.num_components; c++) {
        const jpeg_component_info *component = &info.comp_info[c];
        int table = component->quant_tbl_no;
        const JQUANT_TBL *quant = (table >= 0 && table < NUM_QUANT_TBLS) ? info.quant_tbl_ptrs[table] : NULL;
        if (!quant) {
            snprintf(e.message, sizeof e.message, "component %d names quantisation table %d, which is not defined", c, table);
            copy_error(e.message, error);
            jpeg_destroy_decompress(&info);
            return -1;
        }
        coding->h_sampling[c] = component->h_samp_factor;
        coding->v_sampling[c] = component->v_samp_factor;
        coding->table_number[c] = table;
        // libjpeg keeps tables in natural (row-major) order, not DQT's zigzag.
        for (int k = 0; k < DCTSIZE2; k++) coding->tables[table][k] = quant->quantval[k];
        coding->table_defined[table] = 1;
    }
    jpeg_destroy_decompress(&info);
    return 0;
}

int jpeg_encode_coded(const uint8_t *pixels, int width, int height, const struct jpeg_coding *coding,
                      uint8_t **jpeg, unsigned long *size, char error[200]) {
    struct jpeg_compress_struct info;
    struct escape_errors e;
    unsigned char *buffer = NULL;
    unsigned long length = 0;
    memset(&e, 0, sizeof e);
    info.err = jpeg_std_error(&e.errors);
    e.errors.error_exit = escape;
    info.client_data = &e;
    if (setjmp(e.escape)) {
        copy_error(e.message, error);
        jpeg_destroy_compress(&info);
        free(buffer);
        return -1;
    }
    jpeg_create_compress(&info);
    jpeg_mem_dest(&info, &buffer, &length);
    info.image_width = (JDIMENSION)width;
    info.image_height = (JDIMENSION)height;
    info.input_components = coding->components;
    info.in_color_space = coding->components == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&info);
    info.dct_method = JDCT_ISLOW;
    info.optimize_coding = TRUE;
    for (int t = 0; t < 4; t++) {
        if (!coding->table_defined[t]) continue;
        unsigned int table[DCTSIZE2];
        for (int k = 0; k < DCTSIZE2; k++) table[k] = coding->tables[t][k];
        // Scale 100 keeps every value as it is; 16-bit values stay 16-bit rather than being clamped.
        jpeg_add_quant_table(&info, t, table, 100, FALSE);
    }
    for (int c = 0; c < coding->components; c++) {
        info.comp_info[c].h_samp_factor = coding->h_sampling[c];
        info.comp_info[c].v_samp_factor = coding->v_sampling[c];
        info.comp_info[c].quant_tbl_no = coding->table_number[c];
    }
    jpeg_start_compress(&info, TRUE);
    size_t row = (size_t)width * (size_t)coding->components;
    while (info.next_scanline < info.image_height) {
        JSAMPROW line = (JSAMPROW)(pixels + (size_t)info.next_scanline * row);
        jpeg_write_scanlines(&info, &line, 1);
    }
    jpeg_finish_compress(&info);
    jpeg_destroy_compress(&info);
    *jpeg = buffer;
    *size = length;
    return 0;
}
