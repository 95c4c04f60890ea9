// SPDX-License-Identifier: GPL-3.0-or-later
// The FFmpeg functions the bridge resolves with dlsym; FFmpeg's headers give the types only (nothing links).
#ifndef METASCRUB_CAVFUNCS_H
#define METASCRUB_CAVFUNCS_H
#include "cavbridge.h"
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavformat/avio.h>
#include <libavutil/dict.h>
#include <libavutil/error.h>
#include <libavutil/frame.h>
#include <libavutil/imgutils.h>
#include <libavutil/log.h>
#include <libavutil/mem.h>
#include <libavutil/samplefmt.h>

#define CAV_FN(ret, name, args) ret(*name) args

typedef struct cav_functions {
    int loaded;
    CAV_FN(void *, av_malloc, (size_t));
    CAV_FN(void *, av_mallocz, (size_t));
    CAV_FN(void, av_free, (void *));
    CAV_FN(void, av_freep, (void *));
    CAV_FN(void *, av_realloc_array, (void *, size_t, size_t));
    CAV_FN(AVDictionaryEntry *, av_dict_get, (const AVDictionary *, const char *, const AVDictionaryEntry *, int));
    CAV_FN(int, av_dict_set, (AVDictionary **, const char *, const char *, int));
    CAV_FN(void, av_dict_free, (AVDictionary **));
    CAV_FN(AVFrame *, av_frame_alloc, (void));
    CAV_FN(void, av_frame_free, (AVFrame **));
    CAV_FN(void, av_frame_unref, (AVFrame *));
    CAV_FN(void, av_log_set_level, (int));
    CAV_FN(int, av_strerror, (int, char *, size_t));
    CAV_FN(int, av_image_get_buffer_size, (enum AVPixelFormat, int, int, int));
    CAV_FN(int, av_image_copy_to_buffer, (uint8_t *, int, const uint8_t *const[4], const int[4], enum AVPixelFormat, int, int, int));
    CAV_FN(int, av_get_bytes_per_sample, (enum AVSampleFormat));
    CAV_FN(int, av_sample_fmt_is_planar, (enum AVSampleFormat));

    CAV_FN(int, avcodec_parameters_copy, (AVCodecParameters *, const AVCodecParameters *));
    CAV_FN(const AVCodec *, avcodec_find_decoder, (enum AVCodecID));
    CAV_FN(AVCodecContext *, avcodec_alloc_context3, (const AVCodec *));
    CAV_FN(int, avcodec_parameters_to_context, (AVCodecContext *, const AVCodecParameters *));
    CAV_FN(int, avcodec_open2, (AVCodecContext *, const AVCodec *, AVDictionary **));
    CAV_FN(int, avcodec_send_packet, (AVCodecContext *, const AVPacket *));
    CAV_FN(int, avcodec_receive_frame, (AVCodecContext *, AVFrame *));
    CAV_FN(void, avcodec_free_context, (AVCodecContext **));
    CAV_FN(const char *, avcodec_get_name, (enum AVCodecID));
    CAV_FN(AVPacket *, av_packet_alloc, (void));
    CAV_FN(void, av_packet_free, (AVPacket **));
    CAV_FN(void, av_packet_unref, (AVPacket *));
    CAV_FN(void, av_packet_rescale_ts, (AVPacket *, AVRational, AVRational));

    CAV_FN(AVFormatContext *, avformat_alloc_context, (void));
    CAV_FN(int, avformat_open_input, (AVFormatContext **, const char *, const AVInputFormat *, AVDictionary **));
    CAV_FN(int, avformat_find_stream_info, (AVFormatContext *, AVDictionary **));
    CAV_FN(void, avformat_close_input, (AVFormatContext **));
    CAV_FN(int, avformat_alloc_output_context2, (AVFormatContext **, const AVOutputFormat *, const char *, const char *));
    CAV_FN(void, avformat_free_context, (AVFormatContext *));
    CAV_FN(AVStream *, avformat_new_stream, (AVFormatContext *, const AVCodec *));
    CAV_FN(int, avformat_write_header, (AVFormatContext *, AVDictionary **));
    CAV_FN(int, av_interleaved_write_frame, (AVFormatContext *, AVPacket *));
    CAV_FN(int, av_write_trailer, (AVFormatContext *));
    CAV_FN(int, av_read_frame, (AVFormatContext *, AVPacket *));
    CAV_FN(const AVOutputFormat *, av_guess_format, (const char *, const char *, const char *));
    CAV_FN(enum AVCodecID, av_codec_get_id, (const struct AVCodecTag *const *, unsigned int));
    CAV_FN(int, av_codec_get_tag2, (const struct AVCodecTag *const *, enum AVCodecID, unsigned int *));
    CAV_FN(uint8_t *, av_stream_new_side_data, (AVStream *, enum AVPacketSideDataType, size_t));
    CAV_FN(AVIOContext *, avio_alloc_context,
           (unsigned char *, int, int, void *, int (*)(void *, uint8_t *, int), int (*)(void *, uint8_t *, int),
            int64_t (*)(void *, int64_t, int)));
    CAV_FN(void, avio_context_free, (AVIOContext **));
    CAV_FN(void, avio_flush, (AVIOContext *));
} cav_functions;

extern cav_functions cav_fn;

/// Writes FFmpeg's message for `code`, prefixed by `what`, into err.
void cav_error(char *err, size_t err_size, const char *what, int code);

/// Opens an input through the caller's callbacks; on failure returns a negative code with err filled.
int cav_open_input(const cav_input *input, AVFormatContext **out, int find_stream_info, char *err, size_t err_size);
/// Closes what cav_open_input opened, including its I/O context.
void cav_close_input(AVFormatContext **ic);
#endif
