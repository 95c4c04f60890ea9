// FFmpeg 5.1 (Debian libavformat-dev, libavcodec-dev, libavutil-dev); headers in /usr/include/x86_64-linux-gnu.
// Swift cannot see function-like macros, so the ones needed are wrapped as static inline functions below.
// FFmpeg's headers have no extern "C" guards of their own.
#ifndef METASCRUB_CFFMPEG_SHIM_H
#define METASCRUB_CFFMPEG_SHIM_H
#ifdef __cplusplus
extern "C" {
#endif
#include <libavformat/avformat.h>
#include <libavformat/avio.h>
#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
#include <libavutil/dict.h>
#include <libavutil/error.h>
#include <libavutil/log.h>
#include <libavutil/mem.h>

/// AVERROR_EOF.
static inline int cffmpeg_averror_eof(void) { return AVERROR_EOF; }
/// AVERROR(e): a POSIX errno value as an FFmpeg error code.
static inline int cffmpeg_averror(int e) { return AVERROR(e); }
/// AVERROR_INVALIDDATA.
static inline int cffmpeg_averror_invaliddata(void) { return AVERROR_INVALIDDATA; }
/// AV_NOPTS_VALUE.
static inline int64_t cffmpeg_nopts_value(void) { return AV_NOPTS_VALUE; }
/// AV_TIME_BASE_Q.
static inline AVRational cffmpeg_time_base_q(void) { AVRational q = {1, AV_TIME_BASE}; return q; }
/// av_err2str() (a macro over a compound literal): writes into buf and returns it.
static inline const char *cffmpeg_err2str(int errnum, char *buf, size_t size) {
    av_make_error_string(buf, size, errnum);
    return buf;
}
/// Version of a libav* library as "major.minor.micro" components.
static inline unsigned cffmpeg_version_major(unsigned v) { return AV_VERSION_MAJOR(v); }
static inline unsigned cffmpeg_version_minor(unsigned v) { return AV_VERSION_MINOR(v); }
static inline unsigned cffmpeg_version_micro(unsigned v) { return AV_VERSION_MICRO(v); }

#ifdef __cplusplus
}
#endif
#endif
