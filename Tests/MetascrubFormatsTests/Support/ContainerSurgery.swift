// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import MetascrubNative

/// Writes one element of a container's own kind into an existing file, keeping every length and offset valid, the
/// way a tool that knows the container (and not what we read) would: a JPEG marker segment, a PNG chunk, a GIF
/// extension, a RIFF chunk, an ISOBMFF box, a TIFF tag, a Photoshop image resource.
enum Surgery {
    static func be(_ value: Int, _ width: Int) -> [UInt8] {
        (0..<width).map { UInt8((value >> (8 * (width - 1 - $0))) & 0xFF) }
    }
    static func le(_ value: Int, _ width: Int) -> [UInt8] { (0..<width).map { UInt8((value >> (8 * $0)) & 0xFF) } }
    static func readBE(_ b: [UInt8], _ at: Int, _ width: Int) -> Int {
        b[at..<(at + width)].reduce(0) { $0 << 8 | Int($1) }
    }
    static func readLE(_ b: [UInt8], _ at: Int, _ width: Int) -> Int {
        b[at..<(at + width)].reversed().reduce(0) { $0 << 8 | Int($1) }
    }

    // MARK: JPEG

    static func jpegSegment(_ marker: UInt8, _ body: [UInt8]) -> [UInt8] {
        [0xFF, marker] + be(body.count + 2, 2) + body
    }

    /// The segment inserted right after SOI.
    static func jpegInsert(_ b: [UInt8], _ segment: [UInt8]) -> [UInt8] { Array(b[0..<2]) + segment + Array(b[2...]) }

    /// A JFIF APP0 (version 1.2, no thumbnail) followed by `slack`; replaces the file's own JFIF segment.
    static func jpegJFIFWithSlack(_ b: [UInt8], _ slack: [UInt8]) -> [UInt8] {
        let jfif = jpegSegment(0xE0, Array("JFIF\0".utf8) + [1, 2, 0, 0, 1, 0, 1, 0, 0] + slack)
        var rest = Array(b[2...])
        if rest.count > 10, rest[0] == 0xFF, rest[1] == 0xE0, Array(rest[4..<9]) == Array("JFIF\0".utf8) {
            rest.removeFirst(2 + readBE(rest, 2, 2))
        }
        return Array(b[0..<2]) + jfif + rest
    }

    // MARK: PNG

    static func pngChunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typed = Array(type.utf8) + data
        return be(data.count, 4) + typed + be(Int(Zlib.crc32(typed)), 4)
    }

    /// The chunk inserted before IEND.
    static func pngInsertBeforeEnd(_ b: [UInt8], _ chunk: [UInt8]) -> [UInt8] {
        Array(b[0..<(b.count - 12)]) + chunk + Array(b[(b.count - 12)...])
    }

    /// The chunk inserted right after IHDR (where ancillary chunks that precede the image data go).
    static func pngInsertAfterHeader(_ b: [UInt8], _ chunk: [UInt8]) -> [UInt8] {
        let end = 8 + 12 + readBE(b, 8, 4)
        return Array(b[0..<end]) + chunk + Array(b[end...])
    }

    // MARK: GIF

    static func gifSubBlocks(_ data: [UInt8]) -> [UInt8] {
        stride(from: 0, to: data.count, by: 255).flatMap { start -> [UInt8] in
            let piece = data[start..<min(data.count, start + 255)]
            return [UInt8(piece.count)] + piece
        } + [0]
    }

    /// The extension inserted after the logical screen descriptor and global colour table.
    static func gifInsert(_ b: [UInt8], _ ext: [UInt8]) -> [UInt8] {
        let flags = b[10]
        let end = 13 + (flags & 0x80 != 0 ? 3 << (Int(flags & 7) + 1) : 0)
        return Array(b[0..<end]) + ext + Array(b[end...])
    }

    // MARK: RIFF (WebP)

    static func riffChunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        Array(type.utf8) + le(data.count, 4) + data + (data.count % 2 == 1 ? [0] : [])
    }

    /// The chunk appended at the end of the RIFF form, its size updated.
    static func riffAppend(_ b: [UInt8], _ chunk: [UInt8]) -> [UInt8] {
        var out = b + chunk
        out.replaceSubrange(4..<8, with: le(out.count - 8, 4))
        return out
    }

    /// `extra` bytes written after the fields of the first chunk of `type` (its size grows to cover them).
    static func riffGrow(_ b: [UInt8], type: String, _ extra: [UInt8]) -> [UInt8]? {
        var at = 12
        while at + 8 <= b.count {
            let size = readLE(b, at + 4, 4)
            if Array(b[at..<(at + 4)]) == Array(type.utf8) {
                var grown = Array(b[(at + 8)..<(at + 8 + size)]) + extra
                if grown.count % 2 == 1 { grown.append(0) }
                let rest = Array(b[(at + 8 + size + size % 2)...])
                var out = Array(b[0..<at]) + Array(type.utf8) + le(size + extra.count, 4) + grown + rest
                out.replaceSubrange(4..<8, with: le(out.count - 8, 4))
                return out
            }
            at += 8 + size + size % 2
        }
        return nil
    }

    // MARK: ISOBMFF

    static func box(_ type: String, _ payload: [UInt8]) -> [UInt8] {
        be(payload.count + 8, 4) + Array(type.utf8) + payload
    }

    struct Box { var type: String; var start: Int; var end: Int }

    static func children(_ b: [UInt8], _ range: Range<Int>) -> [Box] {
        var boxes: [Box] = [], at = range.lowerBound
        while at + 8 <= range.upperBound {
            var size = readBE(b, at, 4)
            if size == 1 { size = readBE(b, at + 8, 8) } else if size == 0 { size = range.upperBound - at }
            guard size >= 8, at + size <= range.upperBound else { break }
            boxes.append(Box(type: String(decoding: b[(at + 4)..<(at + 8)], as: UTF8.self), start: at, end: at + size))
            at += size
        }
        return boxes
    }

    /// Where a box's children start: after its header, and after version/flags for full boxes (`meta`).
    static func childStart(_ box: Box) -> Int { box.start + 8 + (box.type == "meta" ? 4 : 0) }

    /// The boxes along `path` from the top level, or nil.
    static func path(_ b: [UInt8], _ names: [String]) -> [Box]? {
        var range = 0..<b.count, found: [Box] = []
        for name in names {
            guard let box = children(b, range).first(where: { $0.type == name }) else { return nil }
            found.append(box)
            range = childStart(box)..<box.end
        }
        return found
    }

    /// `bytes` inserted at `offset` inside the boxes of `ancestors`, whose 32-bit sizes grow; file offsets in a
    /// HEIF `iloc` past the insertion move with the data they point at.
    static func isoInsert(_ b: [UInt8], at offset: Int, _ bytes: [UInt8], ancestors: [Box]) -> [UInt8] {
        var out = Array(b[0..<offset]) + bytes + Array(b[offset...])
        for box in ancestors {
            out.replaceSubrange(box.start..<(box.start + 4), with: be(box.end - box.start + bytes.count, 4))
        }
        if let iloc = path(out, ["meta", "iloc"])?.last { moveIlocOffsets(&out, iloc, from: offset, by: bytes.count) }
        return out
    }

    /// `bytes` replacing the box `old` (inside `ancestors`).
    static func isoReplace(_ b: [UInt8], _ old: Box, with bytes: [UInt8], ancestors: [Box]) -> [UInt8] {
        var removed = b
        removed.removeSubrange(old.start..<old.end)
        let delta = bytes.count - (old.end - old.start)
        var out = Array(removed[0..<old.start]) + bytes + Array(removed[old.start...])
        for box in ancestors {
            out.replaceSubrange(box.start..<(box.start + 4), with: be(box.end - box.start + delta, 4))
        }
        if let iloc = path(out, ["meta", "iloc"])?.last { moveIlocOffsets(&out, iloc, from: old.start, by: delta) }
        return out
    }

    private static func moveIlocOffsets(_ b: inout [UInt8], _ iloc: Box, from offset: Int, by delta: Int) {
        var at = iloc.start + 8
        let version = Int(b[at])
        at += 4
        let offsetSize = Int(b[at] >> 4), lengthSize = Int(b[at] & 15)
        let baseSize = Int(b[at + 1] >> 4), indexSize = version >= 1 ? Int(b[at + 1] & 15) : 0
        at += 2
        let countWidth = version < 2 ? 2 : 4
        let count = readBE(b, at, countWidth)
        at += countWidth
        for _ in 0..<count {
            at += countWidth
            var method = 0
            if version >= 1 { method = readBE(b, at, 2) & 15; at += 2 }
            at += 2
            let base = baseSize > 0 ? readBE(b, at, baseSize) : 0
            if method == 0, baseSize > 0, base >= offset {
                b.replaceSubrange(at..<(at + baseSize), with: be(base + delta, baseSize))
            }
            at += baseSize
            let extents = readBE(b, at, 2)
            at += 2
            for _ in 0..<extents {
                at += indexSize
                let extent = offsetSize > 0 ? readBE(b, at, offsetSize) : 0
                if method == 0, offsetSize > 0, base < offset, base + extent >= offset {
                    b.replaceSubrange(at..<(at + offsetSize), with: be(extent + delta, offsetSize))
                }
                at += offsetSize + lengthSize
            }
        }
    }

    // MARK: TIFF

    /// A copy whose IFD0 is rewritten at the end of the file with one more ASCII tag; the old IFD0 stays behind,
    /// referenced by nothing.
    static func tiffAddTag(_ b: [UInt8], tag: Int, ascii: [UInt8]) -> [UInt8] {
        let little = b[0] == 0x49
        func read(_ at: Int, _ width: Int) -> Int { little ? readLE(b, at, width) : readBE(b, at, width) }
        func write(_ value: Int, _ width: Int) -> [UInt8] { little ? le(value, width) : be(value, width) }
        let ifd = read(4, 4), count = read(ifd, 2)
        var out = b
        if out.count % 2 == 1 { out.append(0) }
        let valueAt = out.count
        out += ascii + [0]
        if out.count % 2 == 1 { out.append(0) }
        var entries = (0..<count).map { Array(b[(ifd + 2 + 12 * $0)..<(ifd + 14 + 12 * $0)]) }
        entries.append(write(tag, 2) + write(2, 2) + write(ascii.count + 1, 4) + write(valueAt, 4))
        entries.sort { read0($0, little) < read0($1, little) }
        let newIFD = out.count
        let next = Array(b[(ifd + 2 + 12 * count)..<(ifd + 6 + 12 * count)])
        out += write(entries.count, 2) + entries.flatMap { $0 } + next
        out.replaceSubrange(4..<8, with: write(newIFD, 4))
        return out
    }

    private static func read0(_ entry: [UInt8], _ little: Bool) -> Int {
        little ? readLE(entry, 0, 2) : readBE(entry, 0, 2)
    }

    // MARK: Photoshop

    /// An image resource (`8BIM`, empty name) inserted first in the image resources section.
    static func psdInsertResource(_ b: [UInt8], id: Int, _ data: [UInt8]) -> [UInt8] {
        let colourModeLength = readBE(b, 26, 4)
        let lengthAt = 30 + colourModeLength
        let resource = Array("8BIM".utf8) + be(id, 2) + [0, 0] + be(data.count, 4) + data
            + (data.count % 2 == 1 ? [0] : [])
        var out = Array(b[0..<(lengthAt + 4)]) + resource + Array(b[(lengthAt + 4)...])
        out.replaceSubrange(lengthAt..<(lengthAt + 4), with: be(readBE(b, lengthAt, 4) + resource.count, 4))
        return out
    }
}
