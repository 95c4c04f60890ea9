// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// The MPEG audio of an MP3 walked frame by frame (frame sync, then the length its header gives), so that
/// whatever sits between frames is seen: two `cat`-joined MP3s put the second file's ID3v2 tag (and its
/// encoder's Info frame) in the middle of the stream, and taggers leave APE, Lyrics3 and ID3v1 tags between
/// the first file's frames and the second's. Every stretch of bytes that is not a frame is an insert: a tag
/// read as a tag, zero padding, or unknown bytes (removed by the policy's `unknown` rule).
struct MP3FrameStream {
    enum Kind {
        case tag(TrailingTags.Kind), padding, unknown
    }

    struct Insert {
        var kind: Kind
        var range: Range<Int64>
    }

    /// A LAME/Info tag in the first frame of a run after the first (the second encoder's, in a joined file).
    struct RunLAME {
        var frame: Int64
        var tag: LAMETag
        var item: Int?
    }

    /// Runs of consecutive frames in file order; a run's last frame may be cut by the end of the stream.
    var runs: [Range<Int64>] = []
    /// Tags between frames, itemised and kept or dropped whole as the tags after the audio are.
    var tags = TrailingTags(tags: [], start: 0)
    /// Bytes between frames that are neither frames, tags nor zero padding, each with its item.
    var unknown: [(range: Range<Int64>, item: Int)] = []
    var lames: [RunLAME] = []

    /// Bytes read at a time while walking headers.
    static let window = 256 << 10
    /// More inserts than this is not a stream of frames with tags in it.
    static let maxInserts = 4096

    /// Walks `start..<end`; `start` is the first frame (found by `MP3Format.firstFrame`).
    static func walk(_ source: any ByteSource, from start: Int64, to end: Int64, format: String) throws -> (MP3FrameStream, [Insert]) {
        var stream = MP3FrameStream()
        var inserts: [Insert] = []
        var reader = Reader(source: source, end: end)
        var at = start
        var runStart: Int64?
        var runHeader: MPEGFrameHeader?
        while at < end {
            if let header = try reader.header(at), let length = try reader.frameLength(header, at: at) {
                // A frame of the same stream continues the run; any other frame must be followed by another.
                let continues = runHeader.map { $0.version == header.version && $0.layer == header.layer } ?? false
                var starts = continues || header.length == nil
                if !starts { starts = try reader.frameStarts(at) }
                // The first frame (where the format's probe found the audio) cut by the end of the stream is coded
                // data cut short, as in a truncated upload or a tag editor's stub file, not bytes of unknown origin.
                if !starts, at == start, at + Int64(length) > end { starts = true }
                if starts {
                    if !continues {
                        if let first = runStart { stream.runs.append(first..<at) }
                        runStart = at
                        runHeader = header
                    }
                    at = min(at + Int64(length), end)
                    continue
                }
            }
            if let first = runStart { stream.runs.append(first..<at) }
            runStart = nil
            runHeader = nil
            guard inserts.count < maxInserts else {
                throw MetascrubError.limitExceeded(format: format, path: "audio frames", offset: at, limit: "\(maxInserts) gaps between frames")
            }
            let insert = try reader.insert(at: at, format: format)
            inserts.append(insert)
            at = insert.range.upperBound
        }
        if let first = runStart { stream.runs.append(first..<at) }
        for run in stream.runs.dropFirst() {
            let head = try source.read(at: run.lowerBound, count: Int(min(Int64(run.count), 2048)))
            if let header = MPEGFrameHeader(head), let lame = LAMETag.find(in: head, header: header) {
                stream.lames.append(RunLAME(frame: run.lowerBound, tag: lame))
            }
        }
        return (stream, inserts)
    }

    /// Items for the tags, unknown bytes and second encoder strings between frames.
    mutating func itemise(_ inserts: [Insert], source: any ByteSource, into found: inout ItemCollector) throws {
        let options = found.options
        for insert in inserts {
            let at = insert.range.lowerBound, length = Int64(insert.range.count)
            switch insert.kind {
            case .padding: break
            case .tag(let kind): tags.tags.append(TrailingTags.Tag(kind: kind, range: insert.range))
            case .unknown:
                found.items.append(MetadataItem(key: "mp3:unknown", category: .content, location: "between audio frames@\(at)", offset: at,
                                          length: length, detail: "\(length) bytes between audio frames that are neither a frame nor a tag",
                                          isUnknown: true))
                unknown.append((insert.range, found.items.count - 1))
            }
        }
        let first = found.items.count
        try tags.itemise(source, into: &found)
        for i in first..<found.items.count {
            // Read as the tags after the audio are, but named for where they are.
            let appended = "appended ID3v2", location = found.items[i].location
            let named = location.hasPrefix(appended) ? "ID3v2" + location.dropFirst(appended.count) : location
            found.items[i].location = "between audio frames@\(found.items[i].offset) > " + named
            if found.items[i].key == "id3:tag" { found.items[i].detail = "ID3v2 tag between audio frames (a second file joined on)" }
        }
        for index in lames.indices {
            let lame = lames[index]
            let head = try source.read(at: lame.frame, count: lame.tag.crcOffset + 2)
            guard !lame.tag.isNeutral(head) else { continue }
            found.items.append(MetadataItem(key: "mp3:encoder", category: .software, location: "frame@\(lame.frame)/Xing/LAME",
                                      offset: lame.frame + Int64(lame.tag.offset), length: 9,
                                      value: options.includeValues ? lame.tag.encoder(head) : nil,
                                      detail: "encoder version in the LAME tag of a second stream joined on (gapless and seek data are kept)"))
            lames[index].item = found.items.count - 1
        }
    }

    /// Reads headers through a window, so that a stream of small frames costs one read per window.
    struct Reader {
        let source: any ByteSource
        let end: Int64
        var buffer: [UInt8] = []
        var base: Int64 = 0

        mutating func bytes(at offset: Int64, count: Int) throws -> ArraySlice<UInt8> {
            let count = Int(min(Int64(count), max(0, end - offset)))
            if offset < base || offset + Int64(count) > base + Int64(buffer.count) {
                base = offset
                buffer = try source.read(at: offset, count: Int(min(Int64(max(window, count)), end - offset)))
            }
            let from = Int(offset - base)
            return buffer[from..<from + count]
        }

        mutating func header(_ at: Int64) throws -> MPEGFrameHeader? {
            let b = try bytes(at: at, count: 4)
            return b.count == 4 ? MPEGFrameHeader(Array(b)) : nil
        }

        mutating func starts(_ at: Int64, with text: String) throws -> Bool {
            try bytes(at: at, count: text.utf8.count).elementsEqual(text.utf8)
        }

        /// A frame's length; a free-format frame (no bitrate) ends at the next header of the same stream.
        mutating func frameLength(_ header: MPEGFrameHeader, at: Int64) throws -> Int? {
            if let length = header.length { return length }
            var next = at + 4
            while next + 4 <= end, next - at < 8192 {
                if let h = try self.header(next), h.version == header.version, h.layer == header.layer, h.sampleRate == header.sampleRate {
                    return Int(next - at)
                }
                next += 1
            }
            return next + 4 > end ? Int(end - at) : nil
        }

        /// Whether a frame starts at `at` that a decoder would follow: its header is followed by another
        /// header of the same stream, or the frame ends the stream.
        mutating func frameStarts(_ at: Int64) throws -> Bool {
            guard let header = try header(at), let length = header.length else { return false }
            let next = at + Int64(length)
            if next >= end - 4 { return next <= end }
            guard let following = try self.header(next) else { return false }
            return following.version == header.version && following.layer == header.layer
        }

        /// What sits at `at`, where no frame starts.
        mutating func insert(at: Int64, format: String) throws -> Insert {
            if let size = try ID3Tag.size(source, at: at), at + size <= end {
                // A tag header whose tag does not parse is still no audio: its bytes are unknown data.
                guard let tag = try? ID3Tag.parse(source, at: at, end: end, format: format, path: "ID3v2 tag between frames") else {
                    return Insert(kind: .unknown, range: at..<at + size)
                }
                return Insert(kind: .tag(.id3v2(tag)), range: at..<at + size)
            }
            if try starts(at, with: "APETAGEX"), at + 32 <= end {
                // An APEv2 header: the size counts items and footer, not the header.
                let h = Array(try bytes(at: at, count: 32))
                let total = 32 + Int64(ByteOrder.little.u32(h, 12))
                if ByteOrder.little.u32(h, 20) & 0x2000_0000 != 0, total >= 64, at + total <= end,
                   try starts(at + total - 32, with: "APETAGEX") {
                    return Insert(kind: .tag(.ape), range: at..<at + total)
                }
            }
            if try starts(at, with: "TAG+"), at + 227 <= end { return Insert(kind: .tag(.enhancedTag), range: at..<at + 227) }
            if try starts(at, with: "TAG"), at + 128 <= end { return Insert(kind: .tag(.id3v1), range: at..<at + 128) }
            // Anything else runs to where the next frame or tag starts.
            let next = try resync(after: at)
            let gap = at..<next
            if try starts(at, with: "LYRICSBEGIN") { return Insert(kind: .tag(.lyrics3), range: gap) }
            var zero = false
            if gap.count <= 1 << 20 { zero = try source.read(at: at, count: gap.count).allSatisfy { $0 == 0 } }
            return Insert(kind: zero ? .padding : .unknown, range: gap)
        }

        /// The next offset after `at` where a frame or a tag starts (the end when none does).
        mutating func resync(after at: Int64) throws -> Int64 {
            var next = at + 1
            while next < end {
                let b = try bytes(at: next, count: 3)
                if b.first == 0xFF, try frameStarts(next) { return next }
                if b.elementsEqual("ID3".utf8), try ID3Tag.size(source, at: next) != nil { return next }
                if b.elementsEqual("TAG".utf8) { return next }
                if b.elementsEqual("APE".utf8), try starts(next, with: "APETAGEX") { return next }
                next += 1
            }
            return end
        }
    }

    /// Where the frames of `a` (runs in `x`, read end to end) first differ from those of `b` (runs in `y`),
    /// outside `holes` (offsets in `a`, sorted); nil when they are the same bytes. What it compared goes to `proven`.
    static func firstDifference(_ a: any ByteSource, _ x: [Range<Int64>], _ b: any ByteSource, _ y: [Range<Int64>],
                                skipping holes: [Range<Int64>], proving proven: inout IdenticalRanges) throws -> Int64? {
        var i = 0, j = 0
        var p = x.first?.lowerBound ?? 0, q = y.first?.lowerBound ?? 0
        while i < x.count && j < y.count {
            let n = min(x[i].upperBound - p, y[j].upperBound - q)
            if n > 0, try !ByteComparison.equal(a, p..<p + n, b, q..<q + n, skipping: holes, proving: &proven) { return p }
            p += n
            q += n
            if p >= x[i].upperBound { i += 1; if i < x.count { p = x[i].lowerBound } }
            if q >= y[j].upperBound { j += 1; if j < y.count { q = y[j].lowerBound } }
        }
        return nil
    }
}
