// libdeflate (Debian libdeflate-dev): its CRC-32 folds with PCLMULQDQ where the CPU has it, 2.5-3x zlib 1.2's
// on this machine; PNG's chunk CRCs over every IDAT were a fifth of a PNG batch's CPU (issue 19).
#ifndef METASCRUB_CDEFLATE_SHIM_H
#define METASCRUB_CDEFLATE_SHIM_H
#include <libdeflate.h>
#endif
