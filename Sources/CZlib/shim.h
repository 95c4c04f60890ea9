// zlib (Debian zlib1g-dev 1.2.x): inflate with a caller-chosen output limit, deflate, crc32.
#ifndef METASCRUB_CZLIB_SHIM_H
#define METASCRUB_CZLIB_SHIM_H
#include <zlib.h>

// inflateInit/deflateInit are macros that pass the version and struct size; Swift cannot call them.
static inline int czlib_inflate_init(z_stream *stream) { return inflateInit(stream); }
static inline int czlib_deflate_init(z_stream *stream, int level) { return deflateInit(stream, level); }
#endif
