// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// What the MP3 scanner found: tags before and after the audio, and the LAME tag in the first frame.
public struct MP3Layout: Sendable {
    var leading: [ID3Tag] = []
    /// Bytes between the leading tags and the first frame that are not zero padding (unknown data).
    var junk: Range<Int64>?
    var junkItem: Int?
    /// The first MPEG audio frame (nil when the file has no audio after its tags).
    var framesStart: Int64
    var framesEnd: Int64
    var lame: LAMETag?
    var lameItem: Int?
    /// The frames walked one by one, and what sits between them.
    var stream = MP3FrameStream()
    var trailing: TrailingTags
}

/// MP3 (MPEG-1/2/2.5 audio, any layer): ID3v2 tags at the start, APE/Lyrics3/ID3v1/appended ID3v2 at the
/// end, any of them between frames (`MP3FrameStream`), and the LAME encoder version in the first frame of each
/// stream. Audio frames are copied byte for byte; only the LAME tag's version characters (and its CRC) change
/// when the encoder string is removed.
public struct MP3Format: FormatHandler {
    public init() {}
    static let format = "MP3"
    static let maxLeadingTags = 8
    /// How far past the tags the first frame is searched for.
    static let syncWindow = 64 << 10

    public func scan(_ input: any ByteSource, options: ScanOptions) throws -> ScanResult<MP3Layout> {
        var found = ItemCollector(options)
        var position: Int64 = 0
        var leading: [ID3Tag] = []
        while leading.count < Self.maxLeadingTags, let size = try ID3Tag.size(input, at: position) {
            var tag = try ID3Tag.parse(input, at: position, end: input.size, format: Self.format, path: "ID3v2 tag #\(leading.count + 1)")
            tag.itemise(location: "ID3v2#\(leading.count + 1)", options: options, into: &found.items)
            tag.itemisePictures(into: &found)
            leading.append(tag)
            position += size
        }
        var trailing = try TrailingTags.find(input, audioStart: position, format: Self.format)
        var layout = MP3Layout(leading: leading, framesStart: position, framesEnd: trailing.start, trailing: trailing)
        if let first = try Self.firstFrame(input, from: position, to: trailing.start) {
            layout.framesStart = first
            if first > position {
                let gap = try input.read(at: position, count: Int(first - position))
                if gap.contains(where: { $0 != 0 }) {
                    layout.junk = position..<first
                    found.items.append(MetadataItem(key: "mp3:junk", category: .content, location: "before the first frame", offset: position,
                                              length: first - position, detail: "\(first - position) bytes of unknown data before the first audio frame",
                                              isUnknown: true))
                    layout.junkItem = found.items.count - 1
                }
            }
            let head = try input.read(at: first, count: Int(min(trailing.start - first, 2048)))
            if let header = MPEGFrameHeader(head), let lame = LAMETag.find(in: head, header: header) {
                layout.lame = lame
                if !lame.isNeutral(head) {
                    found.items.append(MetadataItem(key: "mp3:encoder", category: .software, location: "first frame/Xing/LAME",
                                              offset: first + Int64(lame.offset), length: 9,
                                              value: options.includeValues ? lame.encoder(head) : nil,
                                              detail: "encoder version in the LAME tag (gapless and seek data are kept)"))
                    layout.lameItem = found.items.count - 1
                }
            }
            let (stream, inserts) = try MP3FrameStream.walk(input, from: first, to: trailing.start, format: Self.format)
            layout.stream = stream
            try layout.stream.itemise(inserts, source: input, into: &found)
        } else if trailing.start > position {
            throw MetascrubError.malformed(format: Self.format, path: "audio", offset: position, reason: "no MPEG audio frame after the tags")
        }
        try trailing.itemise(input, into: &found)
        layout.trailing = trailing
        return found.result(layout)
    }

    /// Offset of the first frame header in the window that is followed by another header (or by the end).
    static func firstFrame(_ input: any ByteSource, from start: Int64, to end: Int64) throws -> Int64? {
        guard end > start else { return nil }
        let window = try input.read(at: start, count: Int(min(end - start, Int64(syncWindow) + 8)))
        var at = 0
        while at + 4 <= window.count {
            if window[at] == 0xFF, let header = MPEGFrameHeader(window, at: at) {
                guard let length = header.length else { return start + Int64(at) }
                let next = start + Int64(at + length)
                if next >= end - 4 { return start + Int64(at) }
                let bytes = try input.read(at: next, count: 4)
                if let following = MPEGFrameHeader(bytes), following.version == header.version, following.layer == header.layer {
                    return start + Int64(at)
                }
            }
            at += 1
        }
        return nil
    }

    public func clean(_ input: any ByteSource, scan: ScanResult<MP3Layout>, plan: CleanPlan, to output: any OutputSink) throws -> CleanResult {
        let layout = scan.layout
        var out = OutputPlan()
        out.append(leading: layout.leading, keeps: plan.keeps, cleaned: try scan.cleanedEmbeddedFiles(plan))
        // Zero padding between the tags and the first frame is dropped; unknown bytes there go unless kept.
        if let junk = layout.junk, let item = layout.junkItem, plan.keeps(item) { out.copy(junk, because: .keptItem(item)) }
        // Frames, and what the policy keeps of what sits between them, in file order; a LAME tag whose encoder
        // string goes is rewritten in its frame's first bytes.
        var lames: [Int64: LAMETag] = [:]
        if let lame = layout.lame, let item = layout.lameItem, !plan.keeps(item) { lames[layout.framesStart] = lame }
        for lame in layout.stream.lames { if let item = lame.item, !plan.keeps(item) { lames[lame.frame] = lame.tag } }
        let runs = layout.stream.runs.map { (range: $0, reason: LedgerReason.codedData) }
        let kept = (layout.stream.tags.tags.map { ($0.range, $0.item) } + layout.stream.unknown.map { ($0.range, $0.item) })
            .filter { plan.keeps($0.1) }.map { (range: $0.0, reason: LedgerReason.keptItem($0.1)) }
        // Frames are coded data but for the LAME tag bytes the content check skips (kept: structure the scan read).
        let coded = ByteSplice.subtract(layout.stream.runs, Self.lameHoles(layout))
        func copy(_ range: Range<Int64>, _ reason: LedgerReason) {
            if reason == .codedData { out.copy(range, coded: coded, otherwise: .structure) } else { out.copy(range, because: reason) }
        }
        for piece in (runs + kept).sorted(by: { $0.range.lowerBound < $1.range.lowerBound }) {
            let range = piece.range
            if let lame = lames[range.lowerBound], Int64(lame.crcOffset + 2) <= Int64(range.count) {
                out.append(lame.neutralised(try input.read(at: range.lowerBound, count: lame.crcOffset + 2)))
                copy(range.lowerBound + Int64(lame.crcOffset + 2)..<range.upperBound, piece.reason)
            } else {
                copy(range, piece.reason)
            }
        }
        for tag in layout.trailing.tags where plan.keeps(tag.item) {
            out.copy(tag.range, because: .keptItem(tag.item))
        }
        return CleanResult(method: .remux, ledger: try out.write(from: input, to: output))
    }

    /// Holes in the frames: each LAME tag's version characters and CRC, which a clean may rewrite.
    static func lameHoles(_ layout: MP3Layout) -> [Range<Int64>] {
        var holes: [Range<Int64>] = []
        for (frame, lame) in (layout.lame.map { [(layout.framesStart, $0)] } ?? []) + layout.stream.lames.map({ ($0.frame, $0.tag) }) {
            holes += [frame + Int64(lame.offset + LAMETag.keptPrefix)..<frame + Int64(lame.offset + 9),
                      frame + Int64(lame.crcOffset)..<frame + Int64(lame.crcOffset + 2)]
        }
        return holes
    }

    public func verifyContent(
        original: any ByteSource, _ before: MP3Layout, cleaned: any ByteSource, _ after: MP3Layout, result: CleanResult
    ) throws -> ContentCheck {
        let method = "MPEG audio frames byte-identical (LAME encoder version characters and tag CRC excepted)"
        let holes = Self.lameHoles(before)
        let a = before.stream.runs, b = after.stream.runs
        let sizes = (a.reduce(0) { $0 + Int64($1.count) }, b.reduce(0) { $0 + Int64($1.count) })
        guard sizes.0 == sizes.1 else {
            return ContentCheck(method: method, passed: false, detail: "audio frames are \(sizes.0) bytes before, \(sizes.1) after")
        }
        var identical = IdenticalRanges()
        if let differs = try MP3FrameStream.firstDifference(original, a, cleaned, b, skipping: holes.sorted { $0.lowerBound < $1.lowerBound },
                                                            proving: &identical) {
            return ContentCheck(method: method, passed: false, detail: "audio differs in the frames at byte \(differs) of the original")
        }
        return ContentCheck(method: method, passed: true, identical: identical)
    }
}
