// A small C API over exiv2 0.27 (C++), for Swift. No C++ type and no exception crosses this boundary:
// every function catches everything and reports failure through its result.
// Every call is serialised by one process-wide mutex inside the bridge (exiv2 is not safe to call
// concurrently), exiv2's own logging is muted, and the XMP toolkit is initialised once, on first use.
#ifndef METASCRUB_EXIV2BRIDGE_H
#define METASCRUB_EXIV2BRIDGE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Bytes owned by the bridge (malloc'd, NUL-terminated for convenience; may contain NULs before `length`).
typedef struct exiv2bridge_string {
    char *data;
    size_t length;
} exiv2bridge_string;

/// One decoded metadatum.
typedef struct exiv2bridge_tag {
    exiv2bridge_string key;        ///< e.g. "Exif.Canon.OwnerName"
    exiv2bridge_string group;      ///< e.g. "Canon"
    exiv2bridge_string name;       ///< e.g. "OwnerName"
    exiv2bridge_string type_name;  ///< exiv2's type name; empty when exiv2 has none
    exiv2bridge_string value;      ///< exiv2's toString(), cut to EXIV2BRIDGE_VALUE_MAX bytes
    int64_t count;
    int64_t size;
    int64_t tag_number;            ///< the numeric tag (EXIF/IPTC); 0 for XMP
} exiv2bridge_tag;

/// At most this many bytes of a value's toString() are returned (the Swift side cuts further).
#define EXIV2BRIDGE_VALUE_MAX 4096

/// The result of one call. Every call zeroes it first (so free a used result before reusing it);
/// release it with exiv2bridge_result_free whether the call succeeded or not.
typedef struct exiv2bridge_result {
    exiv2bridge_tag *tags;     ///< decode calls: the datums, in exiv2's order
    size_t tag_count;
    uint8_t *bytes;            ///< exiv2bridge_filter_xmp: the new packet (NULL when nothing is kept)
    size_t byte_count;
    exiv2bridge_string error;  ///< set (data != NULL) when the call failed
} exiv2bridge_result;

/// Each returns 0 on success, -1 on failure (then `out->error` says why).

/// A TIFF-structured EXIF block (APP1 payload after "Exif\0\0"), maker notes included.
int exiv2bridge_decode_exif(const uint8_t *data, size_t length, exiv2bridge_result *out);
/// Raw IPTC-IIM datasets (Photoshop resource 0x0404 payload).
int exiv2bridge_decode_iptc(const uint8_t *data, size_t length, exiv2bridge_result *out);
/// An XMP packet (UTF-8 XML).
int exiv2bridge_decode_xmp(const uint8_t *data, size_t length, exiv2bridge_result *out);
/// Re-serialise an XMP packet keeping only properties whose top-level exiv2 key is listed.
/// `keys` holds `key_count` keys, each terminated by a NUL byte, back to back, in `keys_length` bytes.
/// A key starting with '-' is a structure field to leave out of the kept properties, as an exiv2 key without array
/// indices ("-Xmp.plus.Licensor/plus:LicensorCity"): the field and everything inside it, in every array element.
/// On success `out->bytes` is the packet (omitPacketWrapper|useCompactFormat), or NULL when nothing is kept.
int exiv2bridge_filter_xmp(const uint8_t *data, size_t length,
                           const char *keys, size_t keys_length,
                           exiv2bridge_result *out);

/// Release everything a result holds and zero it. Safe on a zeroed result.
void exiv2bridge_result_free(exiv2bridge_result *result);

/// Exiv2::versionString() copied into buf (NUL-terminated, truncated to cap-1); returns its full length.
size_t exiv2bridge_version(char *buf, size_t cap);

#ifdef __cplusplus
}
#endif

#endif
