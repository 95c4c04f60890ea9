// SPDX-License-Identifier: GPL-3.0-or-later

/// What of an embedded JPEG (an EXIF thumbnail, a raw's preview) identifies that picture rather than the codec.
/// Its quantisation and Huffman tables (the standard ones, in most thumbnails), frame and scan headers and the
/// identifiers that open APPn segments are written the same by every encoder: a converted or re-encoded photo
/// holds them too, so they are never canaries. What is the original's own: the text its APPn and COM segments
/// carry past their identifiers, and a stretch of its entropy-coded data, which no other picture shares.
enum JPEGCanarySource {
    struct Parts: Equatable {
        /// APPn/COM payloads past their identifiers, NUL-separated so runs never join across segments.
        var text: [UInt8]
        /// A window of entropy-coded data varied enough not to be a flat area's repeating pattern.
        var entropy: [UInt8]?
    }

    /// Length of the entropy-coded window.
    static let window = 32
    /// Distinct byte values a window needs: a flat image's scan repeats a short bit pattern, which another flat
    /// image coded with the same tables repeats too.
    static let distinct = 20
    /// How far into the bytes a JPEG may start (a PSD thumbnail resource's header precedes its JFIF).
    static let searchStart = 64

    /// The parts of the JPEG in `bytes`; nil when `bytes` does not hold one near its start.
    static func parts(_ bytes: [UInt8]) -> Parts? {
        guard let soi = start(bytes) else { return nil }
        var text = Array(bytes[..<soi])
        var at = soi + 2
        while at + 4 <= bytes.count {
            guard bytes[at] == 0xFF else { return Parts(text: text, entropy: nil) }
            let marker = bytes[at + 1]
            if marker == 0xFF { at += 1; continue }
            // Stand-alone markers carry no length.
            if marker == 0x01 || (0xD0...0xD7).contains(marker) { at += 2; continue }
            if marker == 0xD9 { break }
            let length = Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
            guard length >= 2 else { break }
            let payload = at + 4..<min(bytes.count, at + 2 + length)
            if (0xE0...0xEF).contains(marker) || marker == 0xFE {
                let body = Array(bytes[payload])
                text += [0] + (marker == 0xFE ? body : Array(body.drop(while: { $0 != 0 })))
            }
            if marker == 0xDA { return Parts(text: text, entropy: entropyWindow(bytes, from: at + 2 + length)) }
            at += 2 + length
        }
        return Parts(text: text, entropy: nil)
    }

    /// Where an SOI followed by a marker starts within the first `searchStart` bytes.
    static func start(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        return (0..<min(searchStart, bytes.count - 3)).first {
            bytes[$0] == 0xFF && bytes[$0 + 1] == 0xD8 && bytes[$0 + 2] == 0xFF
        }
    }

    /// The first window of scan data (before any marker but RST or stuffing) with `distinct` byte values.
    static func entropyWindow(_ bytes: [UInt8], from start: Int) -> [UInt8]? {
        var at = start
        while at + window <= bytes.count {
            let candidate = bytes[at..<at + window]
            // A marker ends the scan data (a stuffed 0xFF00 or an RST does not); what follows it is structure.
            if candidate.indices.contains(where: { bytes[$0] == 0xFF && $0 + 1 < bytes.count && bytes[$0 + 1] != 0
                                                   && !(0xD0...0xD7).contains(bytes[$0 + 1]) }) { return nil }
            if Set(candidate).count >= distinct { return Array(candidate) }
            at += window / 2
        }
        return nil
    }
}
