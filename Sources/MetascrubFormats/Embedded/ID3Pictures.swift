// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// Cover art in ID3v2 `APIC` (v2.2 `PIC`) frames, looked into as files of their own (`EmbeddedFile`), and the
/// frame rebuilt around a cleaned picture: frame size (syncsafe in v2.4) here, the tag size by `ID3Tag.rebuild`.
extension ID3Tag {
    /// Where the picture starts in the frame's payload: after the text encoding, the MIME type (v2.2: a 3-byte
    /// image format), the picture type and the description (terminated by one zero byte, or two in UTF-16).
    static func pictureDataStart(_ payload: ArraySlice<UInt8>, major: UInt8) -> Int? {
        var at = payload.startIndex
        guard at < payload.endIndex else { return nil }
        let encoding = payload[at]
        at += 1
        if major == 2 {
            at += 3
        } else {
            guard let end = payload[at...].firstIndex(of: 0) else { return nil }
            at = end + 1
        }
        at += 1  // picture type
        guard at < payload.endIndex else { return nil }
        if encoding == 1 || encoding == 2 {
            var p = at
            while p + 1 < payload.endIndex, !(payload[p] == 0 && payload[p + 1] == 0) { p += 2 }
            guard p + 1 < payload.endIndex else { return nil }
            at = p + 2
        } else {
            guard let end = payload[at...].firstIndex(of: 0) else { return nil }
            at = end + 1
        }
        return at <= payload.endIndex ? at : nil
    }

    /// Looks into every picture frame stored plainly (no compression, encryption, grouping or frame-level
    /// unsynchronisation) with the picture's own handler; its items become the frame item's children.
    mutating func itemisePictures(into found: inout ItemCollector) {
        for index in frames.indices where frames[index].id == "APIC" && frames[index].item >= 0 {
            let frame = frames[index]
            if major >= 3, body[frame.range.lowerBound + 9] != 0 { continue }
            let payload = body[(frame.range.lowerBound + frame.headerSize)..<frame.range.upperBound]
            guard let start = Self.pictureDataStart(payload, major: major), start < frame.range.upperBound else { continue }
            let picture = Array(body[start..<frame.range.upperBound])
            if found.embeddedFile(picture, item: frame.item, origin: bodyOrigin.map { $0 + Int64(start) }) {
                pictures[index] = start
                // The description ends where its terminator (one zero byte, two in UTF-16) does, before the picture.
                let wide = payload[payload.startIndex] == 1 || payload[payload.startIndex] == 2
                let typeAt = major == 2 ? payload.startIndex + 4 : (payload[(payload.startIndex + 1)...].firstIndex(of: 0) ?? start) + 1
                let text = (typeAt + 1)..<max(typeAt + 1, start - (wide ? 2 : 1))
                if let item = found.pictureDescription(body[text], of: frame.item, offset: bodyOrigin.map { $0 + Int64(text.lowerBound) }) {
                    pictureDescriptions[index] = (item, text)
                }
            }
        }
    }

    /// The frame's bytes with `picture` in place of the one it held.
    func frame(_ index: Int, withPicture picture: [UInt8], keeps: (Int) -> Bool) -> [UInt8]? {
        guard let start = pictures[index] else { return nil }
        let frame = frames[index]
        var payload = Array(body[(frame.range.lowerBound + frame.headerSize)..<start]) + picture
        if let description = pictureDescriptions[index], !keeps(description.item) {
            // The same frame with an empty description: everything before the text, its terminator, the picture.
            payload = Array(body[(frame.range.lowerBound + frame.headerSize)..<description.text.lowerBound])
                + Array(body[description.text.upperBound..<start]) + picture
        }
        let header = Array(body[frame.range.lowerBound..<frame.range.lowerBound + (major == 2 ? 3 : 4)])
        let size = payload.count
        switch major {
        case 2:
            guard size < 1 << 24 else { return nil }
            return header + [UInt8(size >> 16), UInt8((size >> 8) & 0xFF), UInt8(size & 0xFF)] + payload
        case 3:
            return header + BigEndian.bytes32(size) + Array(body[frame.range.lowerBound + 8..<frame.range.lowerBound + 10]) + payload
        default:
            guard size < 1 << 28 else { return nil }
            return header + ID3Tag.syncsafeBytes(size) + Array(body[frame.range.lowerBound + 8..<frame.range.lowerBound + 10]) + payload
        }
    }
}
