// The C API of exiv2bridge.h over exiv2 0.27.
//
// Rules kept by every entry point:
//  * everything runs inside try { } catch (...) { }: no exception ever leaves this file;
//  * everything runs under one process-wide mutex: exiv2 (its XMP toolkit, its namespace registry, its log
//    settings) is not safe to call from two threads at once;
//  * exiv2's logging is muted before its first use, so no metadata value can reach stderr through it;
//  * error messages carry exiv2's error code, never exiv2's message text, which can quote metadata values
//    (e.g. "Invalid LangAlt value `...'").
#include "exiv2bridge.h"

#include <exiv2/exiv2.hpp>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <new>
#include <string>
#include <vector>
#include <unordered_set>

namespace {

// Leaked on purpose: it must outlive every static destructor that could still reach the bridge.
std::mutex &bridgeMutex() {
    static std::mutex *mutex = new std::mutex;
    return *mutex;
}

bool gInitialized = false;     // guarded by bridgeMutex()
bool gXmpAvailable = false;    // guarded by bridgeMutex()

void silentLogHandler(int, const char *) {}

/// Caller holds bridgeMutex().
void ensureInitializedLocked() {
    if (gInitialized) return;
    Exiv2::LogMsg::setLevel(Exiv2::LogMsg::mute);
    Exiv2::LogMsg::setHandler(silentLogHandler);
    gXmpAvailable = Exiv2::XmpParser::initialize();
    gInitialized = true;
}

/// Copy up to `max` bytes of `src` into a malloc'd, NUL-terminated buffer. Throws std::bad_alloc.
void copyString(exiv2bridge_string &dst, const char *src, size_t length, size_t max = SIZE_MAX) {
    size_t n = length < max ? length : max;
    char *data = static_cast<char *>(std::malloc(n + 1));
    if (data == nullptr) throw std::bad_alloc();
    if (n > 0) std::memcpy(data, src, n);
    data[n] = '\0';
    dst.data = data;
    dst.length = n;
}

void copyString(exiv2bridge_string &dst, const std::string &src, size_t max = SIZE_MAX) {
    copyString(dst, src.data(), src.size(), max);
}

void freeString(exiv2bridge_string &s) {
    std::free(s.data);
    s.data = nullptr;
    s.length = 0;
}

/// Drop whatever `out` holds and record `message` as its error. Never throws.
int fail(exiv2bridge_result *out, const char *message) {
    exiv2bridge_result_free(out);
    size_t n = std::strlen(message);
    char *data = static_cast<char *>(std::malloc(n + 1));
    if (data != nullptr) {
        std::memcpy(data, message, n + 1);
        out->error.data = data;
        out->error.length = n;
    }
    return -1;
}

int failWithCode(exiv2bridge_result *out, const char *what, long code) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s (exiv2 error code %ld)", what, code);
    return fail(out, buf);
}

/// Fill `out->tags` from an ExifData, IptcData or XmpData. Throws std::bad_alloc; on a throw, whatever was
/// filled is still reachable from `out` (tag_count is set first, entries are zeroed), so freeing it is safe.
template <class Data>
void fillTags(const Data &data, exiv2bridge_result *out) {
    size_t n = 0;
    for (auto it = data.begin(); it != data.end(); ++it) ++n;
    if (n == 0) return;
    out->tags = static_cast<exiv2bridge_tag *>(std::calloc(n, sizeof(exiv2bridge_tag)));
    if (out->tags == nullptr) throw std::bad_alloc();
    out->tag_count = n;
    size_t i = 0;
    for (auto it = data.begin(); it != data.end() && i < n; ++it, ++i) {
        exiv2bridge_tag &tag = out->tags[i];
        copyString(tag.key, it->key());
        copyString(tag.group, it->groupName());
        copyString(tag.name, it->tagName());
        const char *typeName = it->typeName();
        copyString(tag.type_name, typeName != nullptr ? std::string(typeName) : std::string());
        tag.count = static_cast<int64_t>(it->count());
        tag.size = static_cast<int64_t>(it->size());
        tag.tag_number = static_cast<int64_t>(it->tag());
        std::string value;
        try {
            value = it->toString();
        } catch (const std::bad_alloc &) {
            throw;
        } catch (...) {
            value.clear();  // a value exiv2 cannot print is reported empty; the datum itself is still listed
        }
        copyString(tag.value, value, EXIV2BRIDGE_VALUE_MAX);
    }
}

/// Runs `body` under the bridge mutex with everything caught. `what` names the operation in errors.
template <class Body>
int guarded(exiv2bridge_result *out, const char *what, Body body) {
    if (out == nullptr) return -1;
    std::memset(out, 0, sizeof *out);
    try {
        std::lock_guard<std::mutex> lock(bridgeMutex());
        ensureInitializedLocked();
        return body();
    } catch (const Exiv2::AnyError &e) {
        return failWithCode(out, what, static_cast<long>(e.code()));
    } catch (const std::bad_alloc &) {
        std::string message = std::string(what) + ": out of memory";
        return fail(out, message.c_str());
    } catch (const std::exception &) {
        std::string message = std::string(what) + ": C++ exception";
        return fail(out, message.c_str());
    } catch (...) {
        std::string message = std::string(what) + ": unknown exception";
        return fail(out, message.c_str());
    }
}

/// "Xmp.xmpMM.History[1]/stEvt:action" -> "Xmp.xmpMM.History"; "Xmp.dc.creator" stays.
std::string topLevelXmpKey(const std::string &key) {
    size_t first = key.find('.');
    if (first == std::string::npos) return key;
    size_t second = key.find('.', first + 1);
    if (second == std::string::npos) return key;
    size_t cut = key.find_first_of("[/", second + 1);
    return cut == std::string::npos ? key : key.substr(0, cut);
}

/// Whether an XMP key is a dropped structure field or lies inside one: its path without array indices
/// ("Xmp.plus.Licensor[1]/plus:LicensorCity" → "Xmp.plus.Licensor/plus:LicensorCity") is a dropped path or
/// continues one.
bool droppedField(const std::string &key, const std::vector<std::string> &drop) {
    if (drop.empty()) return false;
    std::string path;
    path.reserve(key.size());
    bool inIndex = false;
    for (char c : key) {
        if (c == '[') inIndex = true;
        else if (c == ']') inIndex = false;
        else if (!inIndex) path.push_back(c);
    }
    for (const std::string &field : drop) {
        if (path == field) return true;
        if (path.size() > field.size() && path.compare(0, field.size(), field) == 0 && path[field.size()] == '/') {
            return true;
        }
    }
    return false;
}

}  // namespace

extern "C" {

int exiv2bridge_decode_exif(const uint8_t *data, size_t length, exiv2bridge_result *out) {
    return guarded(out, "EXIF decode failed", [&]() -> int {
        if (data == nullptr || length < 8) return fail(out, "EXIF decode failed: block shorter than a TIFF header");
        if (length > UINT32_MAX) return fail(out, "EXIF decode failed: block larger than 4 GiB");
        bool little = data[0] == 'I' && data[1] == 'I' && data[2] == 0x2A && data[3] == 0x00;
        bool big = data[0] == 'M' && data[1] == 'M' && data[2] == 0x00 && data[3] == 0x2A;
        if (!little && !big) return fail(out, "EXIF decode failed: no TIFF header");
        Exiv2::ExifData exifData;
        Exiv2::ByteOrder order =
            Exiv2::ExifParser::decode(exifData, static_cast<const Exiv2::byte *>(data), static_cast<uint32_t>(length));
        if (order == Exiv2::invalidByteOrder) return fail(out, "EXIF decode failed: exiv2 rejected the TIFF structure");
        fillTags(exifData, out);
        return 0;
    });
}

int exiv2bridge_decode_iptc(const uint8_t *data, size_t length, exiv2bridge_result *out) {
    return guarded(out, "IPTC decode failed", [&]() -> int {
        if (data == nullptr && length > 0) return fail(out, "IPTC decode failed: no data");
        if (length > UINT32_MAX) return fail(out, "IPTC decode failed: block larger than 4 GiB");
        Exiv2::IptcData iptcData;
        int rc = Exiv2::IptcParser::decode(iptcData, static_cast<const Exiv2::byte *>(data), static_cast<uint32_t>(length));
        if (rc != 0) return failWithCode(out, "IPTC decode failed", rc);
        fillTags(iptcData, out);
        return 0;
    });
}

/// Decoding a packet registers every namespace it declares in exiv2's process-wide registry, so a packet that
/// binds a standard prefix to another URI ("dc" to a corrupted URI) would change how every later packet is read
/// and written. Each XMP call therefore leaves the registry as it found it.
struct NamespaceRegistryReset {
    ~NamespaceRegistryReset() {
        try { Exiv2::XmpProperties::unregisterNs(); } catch (...) {}
    }
};

int exiv2bridge_decode_xmp(const uint8_t *data, size_t length, exiv2bridge_result *out) {
    return guarded(out, "XMP decode failed", [&]() -> int {
        if (!gXmpAvailable) return fail(out, "XMP decode failed: XMP toolkit could not be initialised");
        if (data == nullptr && length > 0) return fail(out, "XMP decode failed: no data");
        NamespaceRegistryReset reset;
        std::string packet(reinterpret_cast<const char *>(data), length);
        Exiv2::XmpData xmpData;
        int rc = Exiv2::XmpParser::decode(xmpData, packet);
        if (rc != 0) return failWithCode(out, "XMP decode failed", rc);
        fillTags(xmpData, out);
        return 0;
    });
}

int exiv2bridge_filter_xmp(const uint8_t *data, size_t length, const char *keys, size_t keys_length,
                           exiv2bridge_result *out) {
    return guarded(out, "XMP filter failed", [&]() -> int {
        if (!gXmpAvailable) return fail(out, "XMP filter failed: XMP toolkit could not be initialised");
        if (data == nullptr && length > 0) return fail(out, "XMP filter failed: no data");
        NamespaceRegistryReset reset;
        std::unordered_set<std::string> keep;
        std::vector<std::string> drop;
        auto add = [&](const std::string &key) {
            if (!key.empty() && key[0] == '-') drop.push_back(key.substr(1));
            else keep.insert(key);
        };
        if (keys != nullptr) {
            size_t start = 0;
            for (size_t i = 0; i < keys_length; ++i) {
                if (keys[i] == '\0') {
                    if (i > start) add(std::string(keys + start, i - start));
                    start = i + 1;
                }
            }
            if (start < keys_length) add(std::string(keys + start, keys_length - start));
        }
        std::string packet(reinterpret_cast<const char *>(data), length);
        Exiv2::XmpData xmpData;
        int rc = Exiv2::XmpParser::decode(xmpData, packet);
        if (rc != 0) return failWithCode(out, "XMP filter failed: decode", rc);
        Exiv2::XmpData kept;
        for (auto it = xmpData.begin(); it != xmpData.end(); ++it) {
            if (keep.count(topLevelXmpKey(it->key())) != 0 && !droppedField(it->key(), drop)) kept.add(*it);
        }
        if (kept.empty()) return 0;
        std::string encoded;
        rc = Exiv2::XmpParser::encode(encoded, kept,
                                      Exiv2::XmpParser::omitPacketWrapper | Exiv2::XmpParser::useCompactFormat, 0);
        if (rc != 0) return failWithCode(out, "XMP filter failed: encode", rc);
        if (encoded.empty()) return 0;
        out->bytes = static_cast<uint8_t *>(std::malloc(encoded.size()));
        if (out->bytes == nullptr) throw std::bad_alloc();
        std::memcpy(out->bytes, encoded.data(), encoded.size());
        out->byte_count = encoded.size();
        return 0;
    });
}

void exiv2bridge_result_free(exiv2bridge_result *result) {
    if (result == nullptr) return;
    if (result->tags != nullptr) {
        for (size_t i = 0; i < result->tag_count; ++i) {
            exiv2bridge_tag &tag = result->tags[i];
            freeString(tag.key);
            freeString(tag.group);
            freeString(tag.name);
            freeString(tag.type_name);
            freeString(tag.value);
        }
        std::free(result->tags);
    }
    std::free(result->bytes);
    freeString(result->error);
    std::memset(result, 0, sizeof *result);
}

size_t exiv2bridge_version(char *buf, size_t cap) {
    try {
        std::lock_guard<std::mutex> lock(bridgeMutex());
        ensureInitializedLocked();
        std::string version = Exiv2::versionString();
        if (buf != nullptr && cap > 0) {
            size_t n = version.size() < cap - 1 ? version.size() : cap - 1;
            std::memcpy(buf, version.data(), n);
            buf[n] = '\0';
        }
        return version.size();
    } catch (...) {
        if (buf != nullptr && cap > 0) buf[0] = '\0';
        return 0;
    }
}

}  // extern "C"
