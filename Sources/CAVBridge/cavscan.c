// SPDX-License-Identifier: GPL-3.0-or-later
// Input through the caller's callbacks, and the scan: format, streams, chapters and every tag.
#include "cavfuncs.h"
#include <stdio.h>

enum { io_buffer_size = 1 << 16 };

void cav_error(char *err, size_t err_size, const char *what, int code) {
    if (!err || !err_size) return;
    char message[128] = "unknown error";
    if (cav_fn.loaded) cav_fn.av_strerror(code, message, sizeof message);
    snprintf(err, err_size, "%s: %s", what, message);
}

static int read_input(void *opaque, uint8_t *buf, int size) {
    const cav_input *input = opaque;
    int n = input->read(input->opaque, buf, size);
    if (n == 0) return AVERROR_EOF;
    return n < 0 ? AVERROR(EIO) : n;
}

static int64_t seek_input(void *opaque, int64_t offset, int whence) {
    const cav_input *input = opaque;
    int64_t r = input->seek(input->opaque, offset, whence & ~AVSEEK_FORCE);
    return r < 0 ? AVERROR(EIO) : r;
}

int cav_open_input(const cav_input *input, AVFormatContext **out, int find_stream_info, char *err, size_t err_size) {
    *out = NULL;
    if (cav_load(err, err_size) != 0) return AVERROR(ENOSYS);
    unsigned char *buffer = cav_fn.av_malloc(io_buffer_size);
    if (!buffer) return AVERROR(ENOMEM);
    // The callbacks get the cav_input itself; it outlives the context (the caller owns both).
    AVIOContext *pb = cav_fn.avio_alloc_context(buffer, io_buffer_size, 0, (void *)input, read_input, NULL, seek_input);
    if (!pb) {
        cav_fn.av_free(buffer);
        return AVERROR(ENOMEM);
    }
    AVFormatContext *ic = cav_fn.avformat_alloc_context();
    if (!ic) {
        cav_fn.av_freep(&pb->buffer);
        cav_fn.avio_context_free(&pb);
        return AVERROR(ENOMEM);
    }
    ic->pb = pb;
    ic->flags |= AVFMT_FLAG_CUSTOM_IO;
    int r = cav_fn.avformat_open_input(&ic, "", NULL, NULL);
    if (r < 0) {
        // avformat_open_input frees the context on failure, never a custom I/O context.
        cav_fn.av_freep(&pb->buffer);
        cav_fn.avio_context_free(&pb);
        cav_error(err, err_size, "libavformat cannot read the file", r);
        return r;
    }
    if (find_stream_info) {
        r = cav_fn.avformat_find_stream_info(ic, NULL);
        if (r < 0) {
            cav_close_input(&ic);
            cav_error(err, err_size, "libavformat cannot find the streams", r);
            return r;
        }
    }
    *out = ic;
    return 0;
}

void cav_close_input(AVFormatContext **ic) {
    if (!*ic) return;
    AVIOContext *pb = (*ic)->pb;
    cav_fn.avformat_close_input(ic);
    if (pb) {
        cav_fn.av_freep(&pb->buffer);
        cav_fn.avio_context_free(&pb);
    }
}

static void report_tags(const AVDictionary *dict, int kind, int index, void *opaque, cav_entry_fn entry) {
    const AVDictionaryEntry *tag = NULL;
    while ((tag = cav_fn.av_dict_get(dict, "", tag, AV_DICT_IGNORE_SUFFIX))) {
        entry(opaque, kind, index, tag->key, tag->value ? tag->value : "");
    }
}

static const char *stream_kind(const AVStream *st) {
    if (st->disposition & AV_DISPOSITION_ATTACHED_PIC) return "cover";
    switch (st->codecpar->codec_type) {
    case AVMEDIA_TYPE_VIDEO: return "video";
    case AVMEDIA_TYPE_AUDIO: return "audio";
    case AVMEDIA_TYPE_SUBTITLE: return "subtitle";
    case AVMEDIA_TYPE_DATA: return "data";
    case AVMEDIA_TYPE_ATTACHMENT: return "attachment";
    default: return "unknown";
    }
}

int cav_scan(const cav_input *input, void *opaque, cav_entry_fn entry, char *err, size_t err_size) {
    AVFormatContext *ic;
    int r = cav_open_input(input, &ic, 1, err, err_size);
    if (r < 0) return r;
    entry(opaque, CAV_ENTRY_FORMAT, -1, ic->iformat->name, ic->iformat->long_name ? ic->iformat->long_name : "");
    report_tags(ic->metadata, CAV_ENTRY_FORMAT_TAG, -1, opaque, entry);
    for (unsigned i = 0; i < ic->nb_streams; i++) {
        const AVStream *st = ic->streams[i];
        entry(opaque, CAV_ENTRY_STREAM, (int)i, stream_kind(st), cav_fn.avcodec_get_name(st->codecpar->codec_id));
        report_tags(st->metadata, CAV_ENTRY_STREAM_TAG, (int)i, opaque, entry);
    }
    for (unsigned i = 0; i < ic->nb_chapters; i++) {
        entry(opaque, CAV_ENTRY_CHAPTER, (int)i, "chapter", "");
        report_tags(ic->chapters[i]->metadata, CAV_ENTRY_CHAPTER_TAG, (int)i, opaque, entry);
    }
    for (unsigned i = 0; i < ic->nb_programs; i++) {
        report_tags(ic->programs[i]->metadata, CAV_ENTRY_PROGRAM_TAG, (int)i, opaque, entry);
    }
    cav_close_input(&ic);
    return 0;
}

int cav_has_muxer(const char *name) {
    if (cav_load(NULL, 0) != 0) return -1;
    return cav_fn.av_guess_format(name, NULL, NULL) != NULL;
}
