// libturbojpeg (Debian libturbojpeg0-dev 2.1.x): the TurboJPEG 2.1 API (tjInitTransform/tjTransform).
#ifndef METASCRUB_CTURBOJPEG_SHIM_H
#define METASCRUB_CTURBOJPEG_SHIM_H
#include <turbojpeg.h>

/// MCU block size for a TJSAMP_* value (0 when out of range); tjMCUWidth/tjMCUHeight are
/// `static const` arrays, which Swift sees only as tuples.
static inline int cturbojpeg_mcu_width(int subsamp) {
    return (subsamp >= 0 && subsamp < TJ_NUMSAMP) ? tjMCUWidth[subsamp] : 0;
}
static inline int cturbojpeg_mcu_height(int subsamp) {
    return (subsamp >= 0 && subsamp < TJ_NUMSAMP) ? tjMCUHeight[subsamp] : 0;
}
#endif
