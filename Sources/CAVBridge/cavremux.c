// SPDX-License-Identifier: GPL-3.0-or-later
// Stream-copy remux into the caller's output sink, keeping only what the policy keeps.
#include "cavfuncs.h"
#include <stdio.h>
#include <string.h>

enum { io_buffer_size = 1 << 16 };

static int write_output(void *opaque, uint8_t *buf, int size) {
    const cav_output *output = opaque;
    return output->write(output->opaque, buf, size) < 0 ? AVERROR(EIO) : 0;
}

static int64_t seek_output(void *opaque, int64_t offset, int whence) {
    const cav_output *output = opaque;
    int64_t r = output->seek(output->opaque, offset, whence & ~AVSEEK_FORCE);
    return r < 0 ? AVERROR(EIO) : r;
}

/// The input's codec tag when the muxer knows it for this codec (as ffmpeg -c copy does), else 0 so the
/// muxer picks its own.
static unsigned codec_tag(const AVOutputFormat *of, const AVCodecParameters *par) {
    unsigned tag = 0;
    if (!of->codec_tag || cav_fn.av_codec_get_id(of->codec_tag, par->codec_tag) == par->codec_id
        || !cav_fn.av_codec_get_tag2(of->codec_tag, par->codec_id, &tag)) {
        return par->codec_tag;
    }
    return 0;
}

static int add_stream(AVFormatContext *oc, const AVStream *in) {
    AVStream *out = cav_fn.avformat_new_stream(oc, NULL);
    if (!out) return AVERROR(ENOMEM);
    int r = cav_fn.avcodec_parameters_copy(out->codecpar, in->codecpar);
    if (r < 0) return r;
    out->codecpar->codec_tag = codec_tag(oc->oformat, in->codecpar);
    out->time_base = in->time_base;
    out->avg_frame_rate = in->avg_frame_rate;
    out->r_frame_rate = in->r_frame_rate;
    out->sample_aspect_ratio = in->sample_aspect_ratio;
    out->disposition = in->disposition;
    // Side data is rendering (display matrix, HDR mastering, stereo mode), not description.
    for (int i = 0; i < in->nb_side_data; i++) {
        const AVPacketSideData *sd = &in->side_data[i];
        uint8_t *dst = cav_fn.av_stream_new_side_data(out, sd->type, sd->size);
        if (!dst) return AVERROR(ENOMEM);
        memcpy(dst, sd->data, sd->size);
    }
    return out->index;
}

static int add_chapters(AVFormatContext *oc, const AVFormatContext *ic) {
    for (unsigned i = 0; i < ic->nb_chapters; i++) {
        const AVChapter *in = ic->chapters[i];
        AVChapter *out = cav_fn.av_mallocz(sizeof *out);
        if (!out) return AVERROR(ENOMEM);
        out->id = in->id;
        out->time_base = in->time_base;
        out->start = in->start;
        out->end = in->end;
        AVChapter **grown = cav_fn.av_realloc_array(oc->chapters, oc->nb_chapters + 1, sizeof *grown);
        if (!grown) {
            cav_fn.av_free(out);
            return AVERROR(ENOMEM);
        }
        oc->chapters = grown;
        oc->chapters[oc->nb_chapters++] = out;
    }
    return 0;
}

static int open_output(AVFormatContext **out, const cav_output *output, const char *muxer, char *err, size_t err_size) {
    int r = cav_fn.avformat_alloc_output_context2(out, NULL, muxer, NULL);
    if (r < 0 || !*out) {
        snprintf(err, err_size, "libavformat has no muxer \"%s\"", muxer);
        return r < 0 ? r : AVERROR_MUXER_NOT_FOUND;
    }
    // No encoder string, creation time or random identifier: a second clean writes the same bytes.
    (*out)->flags |= AVFMT_FLAG_BITEXACT | AVFMT_FLAG_CUSTOM_IO;
    unsigned char *buffer = cav_fn.av_malloc(io_buffer_size);
    if (!buffer) return AVERROR(ENOMEM);
    (*out)->pb = cav_fn.avio_alloc_context(buffer, io_buffer_size, 1, (void *)output, NULL, write_output, seek_output);
    if (!(*out)->pb) {
        cav_fn.av_free(buffer);
        return AVERROR(ENOMEM);
    }
    return 0;
}

static void close_output(AVFormatContext **oc) {
    if (!*oc) return;
    if ((*oc)->pb) {
        cav_fn.av_freep(&(*oc)->pb->buffer);
        cav_fn.avio_context_free(&(*oc)->pb);
    }
    cav_fn.avformat_free_context(*oc);
    *oc = NULL;
}

int cav_remux(const cav_input *input, const cav_output *output, const char *muxer, const uint8_t *keep_streams,
              int stream_count, int keep_chapters, const cav_tag *tags, int tag_count, char *err, size_t err_size) {
    AVFormatContext *ic = NULL, *oc = NULL;
    AVPacket *pkt = NULL;
    int *map = NULL;
    int r = cav_open_input(input, &ic, 1, err, err_size);
    if (r < 0) return r;
    if ((int)ic->nb_streams != stream_count) {
        snprintf(err, err_size, "the file has %u streams, the scan saw %d", ic->nb_streams, stream_count);
        r = AVERROR_INVALIDDATA;
        goto done;
    }
    if ((r = open_output(&oc, output, muxer, err, err_size)) < 0) goto done;
    map = cav_fn.av_mallocz(sizeof *map * (ic->nb_streams + 1));
    pkt = cav_fn.av_packet_alloc();
    if (!map || !pkt) {
        r = AVERROR(ENOMEM);
        goto done;
    }
    for (unsigned i = 0; i < ic->nb_streams; i++) {
        map[i] = -1;
        if (!keep_streams[i]) continue;
        if ((map[i] = add_stream(oc, ic->streams[i])) < 0) {
            r = map[i];
            cav_error(err, err_size, "cannot copy a stream", r);
            goto done;
        }
    }
    if (keep_chapters && (r = add_chapters(oc, ic)) < 0) goto done;
    for (int i = 0; i < tag_count; i++) {
        AVDictionary **dict = NULL;
        int at = tags[i].index;
        if (tags[i].kind == CAV_ENTRY_FORMAT_TAG) dict = &oc->metadata;
        else if (tags[i].kind == CAV_ENTRY_STREAM_TAG && at >= 0 && at < (int)ic->nb_streams && map[at] >= 0)
            dict = &oc->streams[map[at]]->metadata;
        else if (tags[i].kind == CAV_ENTRY_CHAPTER_TAG && at >= 0 && at < (int)oc->nb_chapters)
            dict = &oc->chapters[at]->metadata;
        if (dict && cav_fn.av_dict_set(dict, tags[i].key, tags[i].value, 0) < 0) {
            r = AVERROR(ENOMEM);
            goto done;
        }
    }
    if ((r = cav_fn.avformat_write_header(oc, NULL)) < 0) {
        cav_error(err, err_size, "the muxer refused the streams", r);
        goto done;
    }
    while ((r = cav_fn.av_read_frame(ic, pkt)) >= 0) {
        int out_index = pkt->stream_index < (int)ic->nb_streams ? map[pkt->stream_index] : -1;
        if (out_index < 0) {
            cav_fn.av_packet_unref(pkt);
            continue;
        }
        cav_fn.av_packet_rescale_ts(pkt, ic->streams[pkt->stream_index]->time_base, oc->streams[out_index]->time_base);
        pkt->stream_index = out_index;
        pkt->pos = -1;
        if ((r = cav_fn.av_interleaved_write_frame(oc, pkt)) < 0) {
            cav_error(err, err_size, "cannot write a packet", r);
            goto done;
        }
    }
    if (r != AVERROR_EOF) {
        cav_error(err, err_size, "cannot read a packet", r);
        goto done;
    }
    if ((r = cav_fn.av_write_trailer(oc)) < 0) {
        cav_error(err, err_size, "cannot finish the file", r);
        goto done;
    }
    cav_fn.avio_flush(oc->pb);
    r = oc->pb->error < 0 ? oc->pb->error : 0;
    if (r < 0) cav_error(err, err_size, "cannot write the output", r);
done:
    cav_fn.av_packet_free(&pkt);
    cav_fn.av_free(map);
    close_output(&oc);
    cav_close_input(&ic);
    return r;
}
