// libheif (Debian libheif-dev 1.15.x), reached through dlopen: see heif_lazy.c.
#ifndef METASCRUB_CHEIF_H
#define METASCRUB_CHEIF_H
#include <libheif/heif.h>
#include <libheif/heif_plugin.h>

// Registers (on the first call; later calls only answer) an HEVC decoder over libde265 with `worker_threads`
// threads, above libheif's own one-thread plugin (hevc_decoder.c). Returns 1 when it is in use, 0 when libde265
// could not be loaded (libheif's own plugin then decodes, as before).
int metascrub_heif_use_threaded_hevc(int worker_threads);
#endif
