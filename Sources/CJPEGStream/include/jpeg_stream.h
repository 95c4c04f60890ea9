// SPDX-License-Identifier: GPL-3.0-or-later
// A JPEG decoded a few rows at a time through libjpeg (libjpeg-turbo's libjpeg API), to compare a re-encoded image
// with its source without holding a second decoded image (issue 16). TurboJPEG 2.1 only decodes whole images.
#ifndef METASCRUB_JPEG_STREAM_H
#define METASCRUB_JPEG_STREAM_H
#include <stddef.h>
#include <stdint.h>

struct jpeg_stream;

// Starts decoding `size` bytes at `data` (which must outlive the stream) to 8-bit RGB with libjpeg's accurate
// integer IDCT and its default (fancy) chroma upsampling, as TurboJPEG's tjDecompress2 does. NULL when the
// header cannot be read; `error` (if not NULL) then holds libjpeg's message.
struct jpeg_stream *jpeg_stream_open(const uint8_t *data, size_t size, char error[200]);

int jpeg_stream_width(const struct jpeg_stream *stream);
int jpeg_stream_height(const struct jpeg_stream *stream);

// Decodes up to `rows` rows into `out` (`rows` × width × 3 bytes, rows packed). Returns the number of rows
// decoded (0 at the end), or -1 on a decoding error (the message is then in `error`).
int jpeg_stream_read(struct jpeg_stream *stream, uint8_t *out, int rows, char error[200]);

void jpeg_stream_close(struct jpeg_stream *stream);



// A JPEG encoded from rows the caller supplies, through libjpeg with TurboJPEG's settings (accurate DCT, IJG
// quality tables, JFIF, baseline Huffman tables), so the image never has to exist whole in another layout.
struct jpeg_row_encoder;

// `h_sampling`×`v_sampling`: the luma sampling factors (2×2: 4:2:0, 2×1: 4:2:2, 1×1: 4:4:4). NULL on error.
struct jpeg_row_encoder *jpeg_row_encoder_begin(int width, int height, int quality, int h_sampling, int v_sampling,
                                                char error[200]);

// Encodes `rows` rows of packed 8-bit RGB. Returns 0, or -1 on an error (the encoder must then be freed).
int jpeg_row_encoder_write(struct jpeg_row_encoder *encoder, const uint8_t *rgb, int rows, char error[200]);

// Finishes the file: `*jpeg` (malloc'ed, the caller frees it) and `*size`. Returns 0 or -1.
int jpeg_row_encoder_finish(struct jpeg_row_encoder *encoder, uint8_t **jpeg, unsigned long *size, char error[200]);

void jpeg_row_encoder_free(struct jpeg_row_encoder *encoder);

// A JPEG's coding as libjpeg reads it from the header: per component (in frame order) its sampling factors and
// quantisation table number, and the tables it uses, in natural (row-major) order.
struct jpeg_coding {
    int components;  // 1 (greyscale) or 3 (YCbCr)
    int progressive;
    int h_sampling[3], v_sampling[3], table_number[3];
    int table_defined[4];
    uint16_t tables[4][64];
};

// Reads the coding of `size` bytes at `data`. 0: `coding` is filled in; 1: the JPEG is not an 8-bit Huffman-coded
// YCbCr or greyscale image (`error` says which); -1: the header cannot be read (`error` holds libjpeg's message).
int jpeg_read_coding(const uint8_t *data, size_t size, struct jpeg_coding *coding, char error[200]);

// Encodes packed 8-bit RGB (3 components) or grey (1) with exactly `coding`'s tables, sampling and table numbers:
// accurate DCT, optimised Huffman tables, sequential, JFIF. `*jpeg` is malloc'ed (the caller frees it). 0 or -1.
int jpeg_encode_coded(const uint8_t *pixels, int width, int height, const struct jpeg_coding *coding,
                      uint8_t **jpeg, unsigned long *size, char error[200]);
#endif
