// SPDX-License-Identifier: GPL-3.0-or-later
// A plain C face over Debian's FFmpeg (libavformat/libavcodec/libavutil 59/59/57), which is loaded with
// dlopen on first use and never linked: linking it costs ~40 ms at every process start. FFmpeg's own headers
// are used for types only, inside cavbridge.c; nothing here exposes them.
#ifndef METASCRUB_CAVBRIDGE_H
#define METASCRUB_CAVBRIDGE_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// `whence` value asking a seek callback for the total size (FFmpeg's AVSEEK_SIZE).
#define CAV_SEEK_SIZE 0x10000

/// Where libavformat reads from: the caller's byte source.
typedef struct cav_input {
    void *opaque;
    /// Bytes copied into buf (0 at the end), or a negative value on error.
    int (*read)(void *opaque, uint8_t *buf, int size);
    /// New position for SEEK_SET/SEEK_CUR/SEEK_END, the size for CAV_SEEK_SIZE, or a negative value.
    int64_t (*seek)(void *opaque, int64_t offset, int whence);
} cav_input;

/// Where libavformat writes to: the caller's output sink (muxers seek back to patch headers).
typedef struct cav_output {
    void *opaque;
    /// 0 when all `size` bytes were taken, negative on error.
    int (*write)(void *opaque, const uint8_t *buf, int size);
    int64_t (*seek)(void *opaque, int64_t offset, int whence);
} cav_output;

/// What a scan reports, one call per thing found.
typedef enum cav_entry_kind {
    /// key: demuxer short name, value: long name.
    CAV_ENTRY_FORMAT = 0,
    /// index: stream; key: "video", "audio", "subtitle", "data", "attachment", "cover" (attached picture)
    /// or "unknown"; value: codec name.
    CAV_ENTRY_STREAM = 1,
    /// index: chapter.
    CAV_ENTRY_CHAPTER = 2,
    /// Tags: key and value of one dictionary entry; index: stream/chapter/program (-1 for the format).
    CAV_ENTRY_FORMAT_TAG = 3,
    CAV_ENTRY_STREAM_TAG = 4,
    CAV_ENTRY_CHAPTER_TAG = 5,
    CAV_ENTRY_PROGRAM_TAG = 6,
} cav_entry_kind;

typedef void (*cav_entry_fn)(void *opaque, int kind, int index, const char *key, const char *value);

/// Loads the libraries once per process. 0, or -1 with a message in err.
int cav_load(char *err, size_t err_size);

/// Opens the input, reports its format, streams, chapters and every tag. 0, or a negative FFmpeg error code
/// with a message in err.
int cav_scan(const cav_input *input, void *opaque, cav_entry_fn entry, char *err, size_t err_size);

/// One tag to carry over into the output (the policy keeps it).
typedef struct cav_tag {
    /// CAV_ENTRY_FORMAT_TAG, CAV_ENTRY_STREAM_TAG or CAV_ENTRY_CHAPTER_TAG (only with keep_chapters).
    int kind;
    /// Input stream or chapter index.
    int index;
    const char *key;
    const char *value;
} cav_tag;

/// Remuxes with stream copy into `muxer` (a libavformat muxer name): only streams whose keep_streams entry is
/// non-zero, chapters only when keep_chapters, no tags but `tags`, with the bitexact flags so no encoder
/// string, creation time or random identifier is written. 0, or a negative error with a message.
int cav_remux(const cav_input *input, const cav_output *output, const char *muxer, const uint8_t *keep_streams,
              int stream_count, int keep_chapters, const cav_tag *tags, int tag_count, char *err, size_t err_size);

/// The decoded content of one stream: how many frames, and a hash chained over every frame's samples in order.
typedef struct cav_stream_digest {
    int index;
    /// 1: decoded frames were hashed; 0: no decoder, the coded packets were hashed.
    int decoded;
    int64_t frames;
    /// Packets the decoder rejected (a damaged original rejects the same ones after a stream copy).
    int64_t errors;
    uint64_t hash;
} cav_stream_digest;

/// Decodes every stream (attached pictures, subtitles and data by their packets) and fills digests[0..<n],
/// n = min(stream count, capacity); *count gets the stream count. 0, or a negative error with a message.
int cav_digest(const cav_input *input, cav_stream_digest *digests, int capacity, int *count, char *err, size_t err_size);

/// Whether libavformat has a muxer of this name (0 or 1; -1 when the libraries cannot be loaded).
int cav_has_muxer(const char *name);

#ifdef __cplusplus
}
#endif
#endif
