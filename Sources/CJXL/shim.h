// libjxl (Debian libjxl-dev 0.7.x): the decoder only, for converting JPEG XL to JPEG/PNG.
#ifndef METASCRUB_CJXL_SHIM_H
#define METASCRUB_CJXL_SHIM_H
#include <jxl/decode.h>
#include <jxl/resizable_parallel_runner.h>
#endif
