// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// One ID3v2 tag (v2.2, v2.3, v2.4; id3.org specifications), read whole into memory (bounded) because frames
/// are small and unsynchronisation has to be undone before v2.2/v2.3 frames can be found. Shared by MP3,
/// FLAC (a prepended tag), WAV (`id3 `/`ID3 ` chunks) and AIFF (`ID3 ` chunks).
struct ID3Tag {
    static let maxTagSize = 64 << 20
    static let maxFrames = 1 << 14

    struct Frame {
        /// v2.3-style ID (v2.2 IDs mapped).
        var id: String
        /// Header + payload in `body` (after undoing tag-level unsynchronisation).
        var range: Range<Int>
        var headerSize: Int
        /// Item index, set by `itemise`.
        var item: Int = -1
    }

    var major: UInt8
    var revision: UInt8
    /// Where the whole tag (header, frames, padding, footer) is in the file.
    var fileRange: Range<Int64>
    /// Frame area (after the extended header), unsynchronisation undone for v2.2/v2.3.
    var body: [UInt8]
    var frames: [Frame] = []
    /// Non-zero bytes after the last parseable frame (garbage or a frame the parser could not follow).
    var unparsed: Range<Int>?
    var unparsedItem: Int?
    var hadExtendedHeader = false
    /// File offset of `body[0]` when the body is stored as it is (no tag-level unsynchronisation undone).
    var bodyOrigin: Int64?
    /// Picture frames looked into as files of their own: frame index → where the picture starts in `body`.
    var pictures: [Int: Int] = [:]
    /// Frame index → the item of its picture's description and where that text is in `body`, when it has one.
    var pictureDescriptions: [Int: (item: Int, text: Range<Int>)] = [:]

    /// Size of the tag starting at `offset` from its 10-byte header, or nil when there is no "ID3" header there.
    static func size(_ source: any ByteSource, at offset: Int64) throws -> Int64? {
        guard offset + 10 <= source.size else { return nil }
        let h = try source.read(at: offset, count: 10)
        guard h[0] == 0x49, h[1] == 0x44, h[2] == 0x33, h[3] >= 2, h[3] <= 4, h[3] != 0xFF, h[4] != 0xFF,
              h[6...9].allSatisfy({ $0 < 0x80 }) else { return nil }
        let footer: Int64 = h[3] == 4 && h[5] & 0x10 != 0 ? 10 : 0
        return 10 + Int64(syncsafe(h, 6)) + footer
    }

    static func syncsafe(_ b: [UInt8], _ o: Int) -> Int {
        Int(b[o]) << 21 | Int(b[o + 1]) << 14 | Int(b[o + 2]) << 7 | Int(b[o + 3])
    }

    static func syncsafeBytes(_ v: Int) -> [UInt8] {
        [UInt8((v >> 21) & 0x7F), UInt8((v >> 14) & 0x7F), UInt8((v >> 7) & 0x7F), UInt8(v & 0x7F)]
    }

    /// Removes the 0x00 inserted after every 0xFF by unsynchronisation.
    static func resynchronise(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var previousFF = false
        for b in bytes {
            if previousFF && b == 0 { previousFF = false; continue }
            out.append(b)
            previousFF = b == 0xFF
        }
        return out
    }

    /// Parses the tag at `offset`; `end` bounds it (the end of a chunk, or of the file).
    static func parse(_ source: any ByteSource, at offset: Int64, end: Int64, format: String, path: String) throws -> ID3Tag {
        guard let total = try size(source, at: offset) else {
            throw MetascrubError.malformed(format: format, path: path, offset: offset, reason: "not an ID3v2 header")
        }
        guard offset + total <= end else {
            throw MetascrubError.truncated(format: format, path: path, offset: offset, needed: offset + total - end)
        }
        guard total <= Int64(maxTagSize) else {
            throw MetascrubError.limitExceeded(format: format, path: path, offset: offset, limit: "\(maxTagSize) bytes")
        }
        let raw = try source.read(at: offset, count: Int(total), format: format, path: path)
        let major = raw[3], flags = raw[5]
        let footer = major == 4 && flags & 0x10 != 0 ? 10 : 0
        let frameArea = raw[10..<raw.count - footer]
        // v2.4 unsynchronises frame by frame (each frame says so); v2.2/v2.3 the whole tag.
        var body = flags & 0x80 != 0 && major < 4 ? resynchronise(frameArea) : Array(frameArea)
        var tag = ID3Tag(major: major, revision: raw[4], fileRange: offset..<offset + total, body: [])
        var start = 0
        if flags & 0x40 != 0 && major >= 3 {
            // Extended header: v2.3 size excludes its own 4 bytes; v2.4 size is syncsafe and includes them.
            guard body.count >= 4 else {
                throw MetascrubError.malformed(format: format, path: "\(path)/extended header", offset: offset + 10, reason: "too short")
            }
            let n = major == 3 ? Int(ByteOrder.big.u32(body, 0)) + 4 : syncsafe(body, 0)
            guard n >= 4, n <= body.count else {
                throw MetascrubError.malformed(format: format, path: "\(path)/extended header", offset: offset + 10, reason: "size \(n) outside the tag")
            }
            start = n
            tag.hadExtendedHeader = true
        }
        if major == 2 && flags & 0x40 != 0 {
            // v2.2 "compression" was never defined: the frames cannot be read, so the tag is one opaque block.
            body = Array(body[start...])
            tag.body = body
            tag.unparsed = body.isEmpty ? nil : 0..<body.count
            return tag
        }
        body = Array(body[start...])
        tag.body = body
        if flags & 0x80 == 0 || major == 4 { tag.bodyOrigin = offset + 10 + Int64(start) }
        tag.frames = parseFrames(body, major: major)
        let parsedEnd = tag.frames.last?.range.upperBound ?? 0
        if body[parsedEnd...].contains(where: { $0 != 0 }) { tag.unparsed = parsedEnd..<body.count }
        return tag
    }

    static func parseFrames(_ body: [UInt8], major: UInt8) -> [Frame] {
        let idLength = major == 2 ? 3 : 4
        let headerSize = major == 2 ? 6 : 10
        func validID(_ at: Int) -> Bool {
            body[at..<at + idLength].allSatisfy { ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x30 && $0 <= 0x39) }
        }
        func frameSize(_ at: Int, syncsafe: Bool) -> Int {
            if major == 2 { return Int(body[at + 3]) << 16 | Int(body[at + 4]) << 8 | Int(body[at + 5]) }
            return syncsafe ? ID3Tag.syncsafe(body, at + 4) : Int(ByteOrder.big.u32(body, at + 4))
        }
        var frames: [Frame] = []
        var at = 0
        while at + headerSize <= body.count, frames.count < maxFrames, validID(at) {
            var n = frameSize(at, syncsafe: major == 4)
            if major == 4 {
                // iTunes wrote v2.4 tags with plain (not syncsafe) sizes; take the reading that lands on a frame.
                let plain = frameSize(at, syncsafe: false)
                if plain != n {
                    let next = at + headerSize + n, nextPlain = at + headerSize + plain
                    let syncsafeOK = next == body.count || (next + headerSize <= body.count && (body[next] == 0 || validID(next)))
                    let plainOK = nextPlain == body.count || (nextPlain + headerSize <= body.count && (body[nextPlain] == 0 || validID(nextPlain)))
                    if !syncsafeOK && plainOK { n = plain }
                }
            }
            guard n >= 0, at + headerSize + n <= body.count else { break }
            let id = String(decoding: body[at..<at + idLength], as: UTF8.self)
            frames.append(Frame(id: ID3Frames.canonical(id, major: major), range: at..<at + headerSize + n, headerSize: headerSize))
            at += headerSize + n
        }
        return frames
    }

    /// One item per frame (and one for unparsed bytes). Returns nothing; frame item indices are stored.
    mutating func itemise(location: String, options: ScanOptions, into items: inout [MetadataItem]) {
        let version = "ID3v2.\(major)"
        var seen: [String: Int] = [:]
        for index in frames.indices {
            let frame = frames[index]
            seen[frame.id, default: 0] += 1
            let payload = body[(frame.range.lowerBound + frame.headerSize)..<frame.range.upperBound]
            let data = decodedData(frame)
            let value = options.includeValues ? data.flatMap { ID3Frames.value(id: frame.id, data: $0) }.map { String($0.prefix(200)) } : nil
            let known = ID3Frames.isKnown(frame.id)
            // A frame that cannot be decoded (encrypted, a broken zlib stream) cannot be read: it is unknown data.
            items.append(MetadataItem(
                key: "id3:\(frame.id)", category: known ? ID3Frames.category(frame.id) : NameClassifier.category(of: frame.id, otherwise: .content),
                location: "\(location)/\(frame.id)#\(seen[frame.id] ?? 1)",
                offset: fileRange.lowerBound, length: Int64(frame.range.count), value: value,
                detail: "\(version) \(frame.id) frame, \(payload.count) bytes\(data == nil ? ", encrypted or not decodable" : "")",
                isUnknown: !known || data == nil))
            frames[index].item = items.count - 1
            // Frames kept whole (TXXX, COMM, PRIV, GEOB, any text frame): a position or a metadata block inside
            // becomes an item of its own. Cover art (APIC/PIC) is an embedded file, not text.
            if frame.id != "APIC" && frame.id != "PIC", let data {
                var notes: [Note] = []
                ContentInspector.inspect(data, origin: fileRange.lowerBound + 10 + Int64(frame.range.lowerBound + frame.headerSize),
                                         parent: items.count - 1, options: options, items: &items, notes: &notes)
            }
        }
        if let unparsed {
            items.append(MetadataItem(key: "id3:unparsed", category: .content, location: "\(location)/unparsed",
                                      offset: fileRange.lowerBound, length: Int64(unparsed.count),
                                      detail: "\(unparsed.count) bytes of \(version) data that are not readable frames", isUnknown: true))
            unparsedItem = items.count - 1
        }
    }

    /// Every item of this tag.
    var itemIndices: [Int] { frames.map(\.item) + (unparsedItem.map { [$0] } ?? []) }

    /// The tag with only the kept frames: nil when nothing is kept, nil-changes signalled by `unchanged`.
    enum Rebuilt { case unchanged, drop, replace([UInt8]) }

    /// `cleaned`: picture frames kept with a cleaned picture (item → the picture's cleaned bytes).
    func rebuild(keeps: (Int) -> Bool, cleaned: [Int: [UInt8]] = [:]) -> Rebuilt {
        let all = itemIndices
        let kept = all.filter(keeps)
        let recleaned = frames.indices.filter { cleaned[frames[$0].item] != nil }
        if kept.count == all.count && !all.isEmpty && recleaned.isEmpty { return .unchanged }
        let frameBytes = frames.indices.flatMap { index -> [UInt8] in
            let frame = frames[index]
            if let picture = cleaned[frame.item], let rebuilt = self.frame(index, withPicture: picture, keeps: keeps) { return rebuilt }
            return keeps(frame.item) ? Array(body[frame.range]) : []
        }
        if frameBytes.isEmpty { return .drop }
        // No unsynchronisation, no extended header, no footer: the kept frames as they were.
        return .replace([0x49, 0x44, 0x33, major, revision, 0] + ID3Tag.syncsafeBytes(frameBytes.count) + frameBytes)
    }
}

extension OutputPlan {
    /// ID3v2 tags in front of the audio (MP3, and FLAC files that carry one), each copied, dropped or rebuilt
    /// with its kept frames.
    mutating func append(leading tags: [ID3Tag], keeps: (Int) -> Bool, cleaned: [Int: [UInt8]] = [:]) {
        for tag in tags {
            switch tag.rebuild(keeps: keeps, cleaned: cleaned) {
            case .unchanged: copy(tag.fileRange, because: .structure)
            case .drop: break
            case .replace(let bytes): append(bytes)
            }
        }
    }
}
