// libexif (Debian libexif-dev 0.6.24): only the tag table is used, for tag names.
#ifndef METASCRUB_CEXIF_SHIM_H
#define METASCRUB_CEXIF_SHIM_H
#include <libexif/exif-ifd.h>
#include <libexif/exif-tag.h>
#endif
