// libheif (Debian libheif-dev 1.15.x), reached through dlopen: see heif_lazy.c.
#ifndef METASCRUB_CHEIF_H
#define METASCRUB_CHEIF_H
#include <libheif/heif.h>
#endif
