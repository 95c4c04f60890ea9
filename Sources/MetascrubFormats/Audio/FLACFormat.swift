// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// What the FLAC scanner found: tags around the stream and each metadata block.
public struct FLACLayout: Sendable {
    struct Block {
        var type: UInt8
        /// Offset of the 4-byte block header.
        var offset: Int64
        var length: Int
        var item: Int?
        var comment: VorbisComment?
        /// A PICTURE block looked into as a file of its own: where the picture's 4-byte length is in the payload.
        var pictureLengthAt: Int?
        /// The item of that picture's description, when it has one.
        var descriptionItem: Int?
        var payload: Range<Int64> { offset + 4..<offset + 4 + Int64(length) }
    }

    var leading: [ID3Tag] = []
    var magic: Int64
    var blocks: [Block] = []
    var audio: Range<Int64>
    var trailing: TrailingTags
}

/// Native FLAC (xiph.org FLAC format): metadata blocks are rewritten, frames copied byte for byte.
/// STREAMINFO and SEEKTABLE are kept as they are; PADDING is dropped; VORBIS_COMMENT keeps a valid block
/// with an empty vendor string and only the kept fields (under strict: none); PICTURE, APPLICATION,
/// CUESHEET and unknown blocks go per policy. ID3v2 tags before "fLaC" and ID3v1/APE after the frames too.
public struct FLACFormat: FormatHandler {
    public init() {}
    static let format = "FLAC"
    static let maxBlocks = 1 << 12
    static let names: [UInt8: String] = [0: "STREAMINFO", 1: "PADDING", 2: "APPLICATION", 3: "SEEKTABLE", 4: "VORBIS_COMMENT",
                                         5: "CUESHEET", 6: "PICTURE"]

    /// ID3v2 tags in front of "fLaC" at most; taggers write one.
    static let maxLeadingTags = 4

    /// Whether the FLAC stream marker follows the ID3v2 tags a file starts with (magic-byte detection sees an MP3).
    static func isBehindID3(_ input: any ByteSource) throws -> Bool {
        var position: Int64 = 0
        for _ in 0..<maxLeadingTags {
            guard let size = try ID3Tag.size(input, at: position) else { break }
            position += size
        }
        guard position > 0, position + 4 <= input.size else { return false }
        return try input.read(at: position, count: 4).elementsEqual("fLaC".utf8)
    }

    public func scan(_ input: any ByteSource, options: ScanOptions) throws -> ScanResult<FLACLayout> {
        var found = ItemCollector(options)
        var position: Int64 = 0
        var leading: [ID3Tag] = []
        while leading.count < Self.maxLeadingTags, let size = try ID3Tag.size(input, at: position) {
            var tag = try ID3Tag.parse(input, at: position, end: input.size, format: Self.format, path: "ID3v2 tag before fLaC")
            tag.itemise(location: "ID3v2#\(leading.count + 1)", options: options, into: &found.items)
            tag.itemisePictures(into: &found)
            leading.append(tag)
            position += size
        }
        let magic = try input.read(at: position, count: 4, format: Self.format, path: "stream marker")
        guard magic.elementsEqual("fLaC".utf8) else {
            throw MetascrubError.malformed(format: Self.format, path: "stream marker", offset: position, reason: "no fLaC marker")
        }
        var layout = FLACLayout(leading: leading, magic: position, audio: 0..<0, trailing: TrailingTags(start: input.size))
        position += 4
        var last = false
        var seen: [String: Int] = [:]
        while !last {
            guard layout.blocks.count < Self.maxBlocks else {
                throw MetascrubError.limitExceeded(format: Self.format, path: "metadata blocks", offset: position, limit: "\(Self.maxBlocks) blocks")
            }
            let header = try input.read(at: position, count: 4, format: Self.format, path: "metadata block header #\(layout.blocks.count)")
            last = header[0] & 0x80 != 0
            let type = header[0] & 0x7F
            let length = Int(header[1]) << 16 | Int(header[2]) << 8 | Int(header[3])
            let name = Self.names[type] ?? "block type \(type)"
            guard type != 127 else {
                throw MetascrubError.malformed(format: Self.format, path: "metadata block #\(layout.blocks.count)", offset: position, reason: "invalid block type 127")
            }
            guard position + 4 + Int64(length) <= input.size else {
                throw MetascrubError.truncated(format: Self.format, path: name, offset: position, needed: position + 4 + Int64(length) - input.size)
            }
            if layout.blocks.isEmpty && (type != 0 || length != 34) {
                throw MetascrubError.malformed(format: Self.format, path: "STREAMINFO", offset: position, reason: "the first block must be a 34-byte STREAMINFO")
            }
            var block = FLACLayout.Block(type: type, offset: position, length: length)
            seen[name, default: 0] += 1
            let location = "\(name)#\(seen[name] ?? 1)"
            func add(_ key: String, _ category: Category, _ detail: String, unknown: Bool = false) {
                found.items.append(MetadataItem(key: key, category: category, location: location, offset: position, length: Int64(length) + 4,
                                          detail: detail, isUnknown: unknown))
                block.item = found.items.count - 1
            }
            switch type {
            case 0, 1, 3: break  // STREAMINFO and SEEKTABLE are kept, PADDING always goes: none is metadata.
            case 2:
                let id = length >= 4 ? try input.read(at: position + 4, count: 4) : []
                let printable = id.allSatisfy { $0 >= 0x20 && $0 < 0x7F }
                // An application's own data (a DAW's project state, foreign RIFF chunks): no decoder reads it.
                add("flac:application", .embedded, "APPLICATION block\(printable && !id.isEmpty ? " '\(String(decoding: id, as: UTF8.self))'" : ""), \(length) bytes",
                    unknown: true)
            case 4:
                let data = try input.read(at: position + 4, count: length)
                var comment = try VorbisComment.parse(data, at: 0, format: Self.format, path: location, origin: position + 4)
                comment.itemise(location: location, origin: position + 4, options: options, into: &found.items)
                comment.itemisePictures(into: &found)
                block.comment = comment
            case 5: add("flac:cuesheet", .content, "CUESHEET block (track layout, catalogue number, ISRCs), \(length) bytes")
            case 6:
                add("flac:picture", .embedded, "PICTURE block, \(length) bytes")
                (block.pictureLengthAt, block.descriptionItem) = try Self.picture(in: input, block: block, into: &found)
            default: add("flac:block:\(type)", .content, "reserved metadata block type \(type), \(length) bytes", unknown: true)
            }
            layout.blocks.append(block)
            position += 4 + Int64(length)
        }
        var trailing = try TrailingTags.find(input, audioStart: position, format: Self.format)
        if trailing.start > position {
            let sync = try input.read(at: position, count: min(2, Int(trailing.start - position)))
            guard sync.count == 2, sync[0] == 0xFF, sync[1] & 0xFE == 0xF8 else {
                throw MetascrubError.malformed(format: Self.format, path: "first frame", offset: position, reason: "no frame sync after the last metadata block")
            }
        }
        layout.audio = position..<trailing.start
        try trailing.itemise(input, into: &found)
        layout.trailing = trailing
        return found.result(layout)
    }

    public func clean(_ input: any ByteSource, scan: ScanResult<FLACLayout>, plan: CleanPlan, to output: any OutputSink) throws -> CleanResult {
        let layout = scan.layout
        var out = OutputPlan()
        let cleaned = try scan.cleanedEmbeddedFiles(plan)
        out.append(leading: layout.leading, keeps: plan.keeps, cleaned: cleaned)
        out.copy(layout.magic..<layout.magic + 4, because: .structure)
        // Each kept block: its type, and either its payload range or new bytes.
        enum Payload { case copy(Range<Int64>, LedgerReason), bytes([UInt8]) }
        var kept: [(UInt8, Payload)] = []
        for block in layout.blocks {
            if block.type == 1 { continue }
            if let comment = block.comment {
                let same = comment.unchanged(keeps: plan.keeps) && !comment.fieldItems.contains { cleaned[$0] != nil }
                kept.append((4, same ? .copy(block.payload, .structure) : .bytes(comment.rebuilt(keeps: plan.keeps, cleaned: cleaned))))
            } else if let item = block.item {
                if let picture = cleaned[item], let at = block.pictureLengthAt {
                    // The PICTURE block as it was up to the picture's length, then the cleaned picture.
                    var head = try input.read(at: block.payload.lowerBound, count: at)
                    if let description = block.descriptionItem, !plan.keeps(description) { head = FLACPicture.withoutDescription(head) }
                    kept.append((block.type, .bytes(head + BigEndian.bytes32(picture.count) + picture)))
                } else if plan.keeps(item) {
                    kept.append((block.type, .copy(block.payload, .keptItem(item))))
                }
            } else {
                kept.append((block.type, .copy(block.payload, .codedData)))
            }
        }
        for (index, (type, payload)) in kept.enumerated() {
            let length: Int
            switch payload {
            case .copy(let r, _): length = r.count
            case .bytes(let b): length = b.count
            }
            guard length < 1 << 24 else {
                throw MetascrubError.limitExceeded(format: Self.format, path: "rebuilt metadata block", offset: layout.magic, limit: "16 MiB per block")
            }
            // The last-metadata-block flag moves to whichever block now comes last.
            out.append([(index == kept.count - 1 ? 0x80 : 0) | type, UInt8(length >> 16), UInt8((length >> 8) & 0xFF), UInt8(length & 0xFF)])
            switch payload {
            case .copy(let r, let reason): out.copy(r, because: reason)
            case .bytes(let b): out.append(b)
            }
        }
        out.copy(layout.audio, because: .codedData)
        for tag in layout.trailing.tags where plan.keeps(tag.item) { out.copy(tag.range, because: .keptItem(tag.item)) }
        var result = CleanResult(method: .remux, ledger: try out.write(from: input, to: output))
        if layout.blocks.contains(where: { $0.type == 1 }) {
            result.notes.append(Note(.info, code: "flac-padding-dropped", "PADDING blocks were dropped (they can hold bytes of earlier tags)"))
        }
        return result
    }

    /// Looks into a PICTURE block's picture (after its type, MIME type, description, dimensions and length) with
    /// the picture's own handler; returns where the picture's length is in the payload when it can be kept cleaned,
    /// and the item of its description.
    static func picture(in input: any ByteSource, block: FLACLayout.Block, into found: inout ItemCollector) throws -> (Int?, Int?) {
        guard let item = block.item, block.length >= 32 else { return (nil, nil) }
        let payload = try input.read(at: block.payload.lowerBound, count: block.length)
        guard let at = FLACPicture.lengthAt(payload),
              found.embeddedFile(Array(payload[(at + 4)...]), item: item, origin: block.payload.lowerBound + Int64(at + 4)) else { return (nil, nil) }
        let description = FLACPicture.descriptionRange(payload).flatMap {
            found.pictureDescription(payload[$0], of: item, offset: block.payload.lowerBound + Int64($0.lowerBound))
        }
        return (at, description)
    }

    public func verifyContent(original: any ByteSource, _ before: FLACLayout, cleaned: any ByteSource, _ after: FLACLayout, result: CleanResult) throws -> ContentCheck {
        let method = "STREAMINFO, SEEKTABLE and every audio frame byte-identical"
        let structural: (FLACLayout) -> [FLACLayout.Block] = { $0.blocks.filter { $0.type == 0 || $0.type == 3 } }
        let x = structural(before), y = structural(after)
        guard x.map(\.type) == y.map(\.type) else { return ContentCheck(method: method, passed: false, detail: "STREAMINFO/SEEKTABLE changed") }
        var identical = IdenticalRanges()
        for (p, q) in zip(x, y) {
            guard try ByteComparison.equal(original, p.payload, cleaned, q.payload, skipping: [], proving: &identical) else {
                return ContentCheck(method: method, passed: false, detail: "\(Self.names[p.type] ?? "block") differs")
            }
        }
        guard try ByteComparison.equal(original, before.audio, cleaned, after.audio, skipping: [], proving: &identical) else {
            return ContentCheck(method: method, passed: false, detail: "audio frames differ")
        }
        return ContentCheck(method: method, passed: true, identical: identical)
    }
}
