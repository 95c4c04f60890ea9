// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// The FLAC PICTURE structure (xiph.org FLAC format, METADATA_BLOCK_PICTURE): picture type, MIME type,
/// description, dimensions, then the picture's 4-byte length and bytes. Used by FLAC PICTURE blocks and, in
/// base64, by the `METADATA_BLOCK_PICTURE` comment of Ogg Vorbis and Opus.
enum FLACPicture {
    /// Where the picture's length is in `block`, when the structure holds together and the picture ends it.
    static func lengthAt(_ block: [UInt8]) -> Int? {
        guard block.count >= 32 else { return nil }
        var at = 4
        at += 4 + Int(BigEndian.u32(block, at))
        guard at + 4 <= block.count else { return nil }
        at += 4 + Int(BigEndian.u32(block, at)) + 16
        guard at + 4 <= block.count, at + 4 + Int(BigEndian.u32(block, at)) == block.count else { return nil }
        return at
    }

    /// Where the description's text is in `block` (or in its head up to the picture's length).
    static func descriptionRange(_ block: [UInt8]) -> Range<Int>? {
        guard block.count >= 12 else { return nil }
        let mimeEnd = 8 + Int(BigEndian.u32(block, 4))
        guard mimeEnd + 4 <= block.count else { return nil }
        let length = Int(BigEndian.u32(block, mimeEnd))
        guard length <= block.count - mimeEnd - 4 else { return nil }
        return (mimeEnd + 4)..<(mimeEnd + 4 + length)
    }

    /// `head` (the structure up to the picture's length) with an empty description.
    static func withoutDescription(_ head: [UInt8]) -> [UInt8] {
        guard let r = descriptionRange(head) else { return head }
        return Array(head[..<(r.lowerBound - 4)]) + [0, 0, 0, 0] + Array(head[r.upperBound...])
    }
}

extension ItemCollector {
    /// A cover's description (free text a tagger or a person wrote) as the cover's child, so the policy decides it
    /// like any other text: a cover kept cleaned loses it when it goes, and a position in it is found.
    mutating func pictureDescription(_ text: ArraySlice<UInt8>, of item: Int, offset: Int64?) -> Int? {
        guard text.contains(where: { $0 != 0 && $0 != 0x20 }) else { return nil }
        return add(items[item].key + "/description", .content, location: items[item].location + "/description", offset: offset,
                   length: Int64(text.count), value: ValueText.render(text), detail: "picture description", parent: item)
    }
}

/// Cover art in a Vorbis comment's `METADATA_BLOCK_PICTURE` field, looked into as a file of its own
/// (`EmbeddedFile`) and put back, cleaned, in base64.
extension VorbisComment {
    static let pictureField = "METADATA_BLOCK_PICTURE"

    /// Offsets are not given: the picture is stored in base64, not as it is.
    mutating func itemisePictures(into found: inout ItemCollector) {
        for (index, field) in fields.enumerated() where index < fieldItems.count && Self.name(field) == Self.pictureField {
            guard let eq = field.firstIndex(of: 0x3D), let block = Base64.decode(field[(eq + 1)...]),
                  let at = FLACPicture.lengthAt(block) else { continue }
            if found.embeddedFile(Array(block[(at + 4)...]), item: fieldItems[index], origin: nil) {
                pictures[index] = Array(block[..<at])
                if let r = FLACPicture.descriptionRange(block),
                   let description = found.pictureDescription(block[r], of: fieldItems[index], offset: nil) {
                    pictureDescriptions[index] = description
                }
            }
        }
    }

    /// The field with `picture` in place of the one it held (same name, same PICTURE fields).
    func field(_ index: Int, withPicture picture: [UInt8], keeps: (Int) -> Bool) -> [UInt8]? {
        guard var head = pictures[index], let eq = fields[index].firstIndex(of: 0x3D) else { return nil }
        if let description = pictureDescriptions[index], !keeps(description) { head = FLACPicture.withoutDescription(head) }
        return Array(fields[index][...eq]) + Base64.encode(head + BigEndian.bytes32(picture.count) + picture)
    }
}

/// RFC 4648 base64 with padding, as Vorbis comments write it.
enum Base64 {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func encode(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        while i < bytes.count {
            let n = min(3, bytes.count - i)
            let v = Int(bytes[i]) << 16 | (n > 1 ? Int(bytes[i + 1]) << 8 : 0) | (n > 2 ? Int(bytes[i + 2]) : 0)
            out.append(alphabet[(v >> 18) & 63])
            out.append(alphabet[(v >> 12) & 63])
            out.append(n > 1 ? alphabet[(v >> 6) & 63] : 0x3D)
            out.append(n > 2 ? alphabet[v & 63] : 0x3D)
            i += 3
        }
        return out
    }

    /// nil when the text is not base64 (whitespace is not allowed inside a comment field's value).
    static func decode(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        var table = [Int](repeating: -1, count: 256)
        for (i, c) in alphabet.enumerated() { table[Int(c)] = i }
        let body = text.reversed().drop(while: { $0 == 0x3D }).reversed()
        guard text.count % 4 == 0, text.count - body.count <= 2 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(body.count * 3 / 4)
        var acc = 0, bits = 0
        for c in body {
            let v = table[Int(c)]
            guard v >= 0 else { return nil }
            acc = (acc << 6) | v
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8((acc >> bits) & 0xFF))
            }
        }
        return out
    }
}
