// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubNative

/// A frame's data as a tag reader sees it. Taggers may compress a frame (zlib), unsynchronise it (v2.4) or put a
/// grouping byte and a data length indicator before it; a comment or TXXX stating a position is only readable
/// once that is undone, so both the value shown and the search for positions read the decoded data.
extension ID3Tag {
    /// The decoded data of `frame`, or nil when it cannot be read (encrypted, or not a zlib stream).
    func decodedData(_ frame: Frame) -> [UInt8]? {
        let payload = Array(body[(frame.range.lowerBound + frame.headerSize)..<frame.range.upperBound])
        guard major >= 3 else { return payload }
        let flags = body[frame.range.lowerBound + 9]
        let compressed: Bool
        var data: [UInt8]
        if major == 3 {
            // v2.3 flags: compression (a 4-byte decompressed size first), encryption (a method byte), grouping (a group byte).
            guard flags & 0x40 == 0 else { return nil }
            compressed = flags & 0x80 != 0
            data = Array(payload.dropFirst((compressed ? 4 : 0) + (flags & 0x20 != 0 ? 1 : 0)))
        } else {
            // v2.4 flags: grouping (a group byte), compression, encryption, unsynchronisation, data length indicator (4 bytes).
            guard flags & 0x04 == 0 else { return nil }
            compressed = flags & 0x08 != 0
            data = Array(payload.dropFirst((flags & 0x40 != 0 ? 1 : 0) + (flags & 0x01 != 0 ? 4 : 0)))
            if flags & 0x02 != 0 { data = ID3Tag.resynchronise(data[...]) }
        }
        guard compressed else { return data }
        return try? Zlib.inflate(data, limit: ContentInspector.limit, prefixOnly: true)
    }
}
