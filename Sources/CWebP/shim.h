// libwebp (Debian libwebp-dev 1.2.x): the simple decode/encode API, for re-encoding an orientation bake.
#ifndef METASCRUB_CWEBP_SHIM_H
#define METASCRUB_CWEBP_SHIM_H
#include <webp/decode.h>
#include <webp/encode.h>
#endif
