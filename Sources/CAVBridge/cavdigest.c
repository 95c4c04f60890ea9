// SPDX-License-Identifier: GPL-3.0-or-later
// Decodes every stream and chains a hash over each decoded frame (ffmpeg -f framemd5, in process): what a
// player would show and play must be the same before and after a clean.
#include "cavfuncs.h"
#include <stdio.h>
#include <string.h>

typedef struct stream_state {
    AVCodecContext *decoder;
    cav_stream_digest digest;
} stream_state;

/// 64-bit multiply-xorshift over the bytes, eight at a time; fast enough to keep up with decoding.
static uint64_t mix(uint64_t h, const uint8_t *p, size_t n) {
    const uint64_t k = 0x9E3779B97F4A7C15ull;
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = (h ^ w) * k;
        h ^= h >> 29;
        p += 8;
        n -= 8;
    }
    uint64_t w = 0;
    memcpy(&w, p, n);
    h = (h ^ w ^ ((uint64_t)n << 56)) * k;
    return h ^ (h >> 31);
}

static uint64_t mix_int(uint64_t h, int64_t v) { return mix(h, (const uint8_t *)&v, sizeof v); }

typedef struct scratch {
    uint8_t *bytes;
    int size;
} scratch;

/// The frame's samples without line padding, chained onto the stream's hash.
static int hash_frame(cav_stream_digest *d, const AVFrame *f, enum AVMediaType type, scratch *s) {
    uint64_t h = mix_int(0, f->format);
    if (type == AVMEDIA_TYPE_VIDEO) {
        h = mix_int(mix_int(h, f->width), f->height);
        int size = cav_fn.av_image_get_buffer_size(f->format, f->width, f->height, 1);
        if (size > 0) {
            if (size > s->size) {
                cav_fn.av_free(s->bytes);
                s->bytes = cav_fn.av_malloc(size);
                s->size = s->bytes ? size : 0;
                if (!s->bytes) return AVERROR(ENOMEM);
            }
            int n = cav_fn.av_image_copy_to_buffer(s->bytes, size, (const uint8_t *const *)f->data, f->linesize,
                                                   f->format, f->width, f->height, 1);
            if (n < 0) return n;
            h = mix(h, s->bytes, (size_t)n);
        }
    } else {
        int channels = f->ch_layout.nb_channels;
        int bytes = cav_fn.av_get_bytes_per_sample(f->format);
        int planar = cav_fn.av_sample_fmt_is_planar(f->format);
        int planes = planar ? channels : 1;
        size_t plane_size = (size_t)f->nb_samples * bytes * (planar ? 1 : channels);
        h = mix_int(mix_int(h, channels), f->sample_rate);
        for (int p = 0; p < planes && f->extended_data; p++) h = mix(h, f->extended_data[p], plane_size);
    }
    d->hash = mix_int(d->hash ^ h, d->frames);
    d->frames++;
    return 0;
}

static int drain(stream_state *st, AVFrame *frame, scratch *s) {
    for (;;) {
        int r = cav_fn.avcodec_receive_frame(st->decoder, frame);
        if (r == AVERROR(EAGAIN) || r == AVERROR_EOF) return 0;
        if (r < 0) {
            st->digest.errors++;
            return 0;
        }
        r = hash_frame(&st->digest, frame, st->decoder->codec_type, s);
        cav_fn.av_frame_unref(frame);
        if (r < 0) return r;
    }
}

static AVCodecContext *open_decoder(const AVStream *st) {
    if (st->disposition & AV_DISPOSITION_ATTACHED_PIC) return NULL;
    enum AVMediaType type = st->codecpar->codec_type;
    if (type != AVMEDIA_TYPE_VIDEO && type != AVMEDIA_TYPE_AUDIO) return NULL;
    const AVCodec *codec = cav_fn.avcodec_find_decoder(st->codecpar->codec_id);
    if (!codec) return NULL;
    AVCodecContext *ctx = cav_fn.avcodec_alloc_context3(codec);
    if (!ctx) return NULL;
    ctx->thread_count = 1;
    ctx->pkt_timebase = st->time_base;
    if (cav_fn.avcodec_parameters_to_context(ctx, st->codecpar) < 0 || cav_fn.avcodec_open2(ctx, codec, NULL) < 0) {
        cav_fn.avcodec_free_context(&ctx);
        return NULL;
    }
    return ctx;
}

int cav_digest(const cav_input *input, cav_stream_digest *digests, int capacity, int *count, char *err, size_t err_size) {
    AVFormatContext *ic;
    int r = cav_open_input(input, &ic, 1, err, err_size);
    if (r < 0) return r;
    int n = (int)ic->nb_streams;
    *count = n;
    stream_state *states = cav_fn.av_mallocz(sizeof *states * (n + 1));
    AVPacket *pkt = cav_fn.av_packet_alloc();
    AVFrame *frame = cav_fn.av_frame_alloc();
    scratch s = {NULL, 0};
    if (!states || !pkt || !frame) {
        r = AVERROR(ENOMEM);
        goto done;
    }
    for (int i = 0; i < n; i++) {
        states[i].digest.index = i;
        states[i].decoder = open_decoder(ic->streams[i]);
        states[i].digest.decoded = states[i].decoder != NULL;
    }
    while ((r = cav_fn.av_read_frame(ic, pkt)) >= 0) {
        int i = pkt->stream_index;
        if (i >= 0 && i < n) {
            stream_state *st = &states[i];
            if (st->decoder) {
                if (cav_fn.avcodec_send_packet(st->decoder, pkt) < 0) st->digest.errors++;
                else r = drain(st, frame, &s);
            } else {
                st->digest.hash = mix_int(mix(st->digest.hash, pkt->data, (size_t)pkt->size), st->digest.frames);
                st->digest.frames++;
            }
        }
        cav_fn.av_packet_unref(pkt);
        if (r < 0) {
            cav_error(err, err_size, "cannot hash a frame", r);
            goto done;
        }
    }
    if (r != AVERROR_EOF) {
        cav_error(err, err_size, "cannot read a packet", r);
        goto done;
    }
    r = 0;
    for (int i = 0; i < n; i++) {
        if (!states[i].decoder) continue;
        cav_fn.avcodec_send_packet(states[i].decoder, NULL);
        if ((r = drain(&states[i], frame, &s)) < 0) {
            cav_error(err, err_size, "cannot hash a frame", r);
            break;
        }
    }
done:
    if (states) {
        for (int i = 0; i < n; i++) {
            if (i < capacity) digests[i] = states[i].digest;
            cav_fn.avcodec_free_context(&states[i].decoder);
        }
    }
    cav_fn.av_free(states);
    cav_fn.av_free(s.bytes);
    cav_fn.av_frame_free(&frame);
    cav_fn.av_packet_free(&pkt);
    cav_close_input(&ic);
    return r;
}
