// libheif (Debian libheif-dev 1.15.x).
#ifndef METASCRUB_CHEIF_SHIM_H
#define METASCRUB_CHEIF_SHIM_H
#include <libheif/heif.h>
#endif
