// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// What the AVI scanner learned: per item the chunks to overwrite, and the ranges a decoder needs.
public struct AVILayout: Sendable {
    enum Action {
        /// Turn the chunk (or LIST) into a zero-filled JUNK chunk of the same size.
        case junk(Range<Int64>)
        /// Zero the payload of a JUNK chunk that still holds old data.
        case zero(Range<Int64>)
        /// Overwrite bytes with same-length replacements (SEI user data, JPEG APPn inside frames).
        case patch([(range: Range<Int64>, bytes: [UInt8])])
    }

    var actions: [Int: [Action]] = [:]
    /// A LIST INFO becomes JUNK whole when every item inside it is removed.
    var groups: [(range: Range<Int64>, items: [Int])] = []
    /// avih, strh, strf, indx, vprp, dmlh, every movi list and idx1: compared byte for byte.
    var core: [Range<Int64>] = []
    var end: Int64 = 0
    /// Streams seen so far (`strh` order), which of them are H.264 or Motion-JPEG, and frames counted per stream.
    var streams = 0
    var h264Streams: Set<Int> = []
    var mjpegStreams: Set<Int> = []
    var frames: [Int: Int] = [:]
    /// In-frame bytes a clean may overwrite (the verifier skips them).
    var seiRanges: [Range<Int64>] = []
    var trailer: Range<Int64>?
    var trailerItem: Int?
}

/// AVI (RIFF "AVI " plus OpenDML "AVIX" extensions): metadata chunks are overwritten in place by JUNK chunks
/// of the same size, so idx1 (relative to movi) and OpenDML indx/ix## (absolute offsets) stay valid and the
/// movi lists (every coded frame) are copied unchanged.
public struct AVIFormat: FormatHandler {
    public init() {}

    static let format = "AVI"
    static let maxChunks = 1 << 20

    static let structural: Set<String> = ["avih", "strh", "strf", "indx", "vprp", "dmlh", "idx1"]

    public func scan(_ input: any ByteSource, options: ScanOptions) throws -> ScanResult<AVILayout> {
        try Scanner.scan(input, options: options)
    }

    struct Scanner: LayoutScanner {
        let input: any ByteSource
        var found: ItemCollector
        var layout = AVILayout()
        var chunks = 0
        var seiTally = SampleSEI.Tally()

        init(input: any ByteSource, options: ScanOptions) {
            self.input = input
            found = ItemCollector(options)
        }

        mutating func add(_ key: String, _ category: Category, _ range: Range<Int64>, location: String, detail: String,
                          value: String? = nil, unknown: Bool = false, action: AVILayout.Action) -> Int {
            let item = found.add(key, category, range, location: location, value: value, detail: detail, unknown: unknown)
            layout.actions[item] = [action]
            return item
        }

        mutating func run() throws {
            let size = input.size
            var at: Int64 = 0
            var forms = 0
            while at + 12 <= size {
                let head = try input.read(at: at, count: 12, format: format, path: "RIFF header")
                guard head[0..<4].elementsEqual("RIFF".utf8) else { break }
                let form = String(decoding: head[8..<12], as: UTF8.self)
                guard (forms == 0 && form == "AVI ") || (forms > 0 && form == "AVIX") else {
                    throw MetascrubError.malformed(format: format, path: "RIFF form", offset: at, reason: "unexpected RIFF form type")
                }
                var end = at + 8 + Int64(ByteOrder.little.u32(head, 4))
                if end > size {
                    // A cut file: the chunk walk below still refuses it unless the cut is in the media data.
                    let error = MetascrubError.truncated(format: format, path: "RIFF \(form.trimmingSuffixSpaces)", offset: at + 4, needed: end - size)
                    try found.damaged(error, at: at + 4, "the RIFF \(form.trimmingSuffixSpaces) form declares \(end - at - 8) bytes but the file ends at \(size)")
                    end = size
                }
                try list(from: at + 12, to: end, path: forms == 0 ? "RIFF" : "RIFF-AVIX#\(forms)", depth: 0)
                forms += 1
                at = end + (end & 1 == 1 && end < size ? 1 : 0)
            }
            guard forms > 0 else { throw MetascrubError.malformed(format: format, path: "RIFF header", offset: 0, reason: "not a RIFF AVI file") }
            layout.end = at
            if at < size {
                layout.trailer = at..<size
                layout.trailerItem = try found.trailer("avi:trailer", at..<size, in: input, location: "after RIFF", after: "the RIFF forms")
            }
            finishSEI()
        }

        mutating func list(from start: Int64, to end: Int64, path: String, depth: Int) throws {
            guard depth < 8 else { throw MetascrubError.limitExceeded(format: format, path: path, offset: start, limit: "8 nested lists") }
            var at = start
            var count: [String: Int] = [:]
            while at + 8 <= end {
                chunks += 1
                guard chunks <= maxChunks else { throw MetascrubError.limitExceeded(format: format, path: path, offset: at, limit: "\(maxChunks) chunks") }
                let head = try input.read(at: at, count: 8, format: format, path: path)
                let id = String(decoding: head[0..<4], as: UTF8.self)
                let payload = Int64(ByteOrder.little.u32(head, 4))
                let chunkEnd = at + 8 + payload
                if chunkEnd > end, end == input.size, found.options.tolerateDamage, try isMediaData(at: at, id: id, end: end) {
                    let error = MetascrubError.truncated(format: format, path: "\(path)/\(id)", offset: at, needed: chunkEnd - end)
                    try found.damaged(error, at: at, "the file ends inside the \(id == "LIST" ? "movi list" : id) at \(at) (\(chunkEnd - end) bytes missing); the part that is there is copied byte for byte at the same offsets and compared")
                    layout.core.append(at..<end)
                    if id == "LIST" { try moviSEI(from: at + 12, to: end, depth: 0) }
                    return
                }
                guard chunkEnd <= end else {
                    throw end == input.size
                        ? MetascrubError.truncated(format: format, path: "\(path)/\(id)", offset: at, needed: chunkEnd - end)
                        : MetascrubError.malformed(format: format, path: "\(path)/\(id)", offset: at, reason: "chunk extends past its list")
                }
                let range = at..<chunkEnd
                count[id, default: 0] += 1
                if id == "LIST" {
                    guard payload >= 4 else { throw MetascrubError.malformed(format: format, path: "\(path)/LIST", offset: at, reason: "LIST without a type") }
                    let type = String(decoding: try input.read(at: at + 8, count: 4), as: UTF8.self)
                    let loc = "\(path)/LIST-\(type.trimmingSuffixSpaces)"
                    switch type {
                    case "movi":
                        layout.core.append(range)
                        try moviSEI(from: at + 12, to: chunkEnd, depth: 0)
                    case "hdrl", "strl", "odml":
                        try list(from: at + 12, to: chunkEnd, path: loc, depth: depth + 1)
                    case "INFO":
                        try info(range, location: loc)
                    case "exif", "ncdt", "Tdat":
                        _ = add("avi:\(type)", .device, range, location: loc, detail: "camera metadata list (\(type)), \(payload) bytes", action: .junk(range))
                    default:
                        _ = add("avi:LIST-\(type.trimmingSuffixSpaces)", .content, range, location: loc, detail: "unknown LIST \(type), \(payload) bytes",
                                unknown: true, action: .junk(range))
                    }
                } else if structural.contains(id) {
                    layout.core.append(range)
                    if id == "strh" || id == "strf" { try noteStream(id, at: at, payload: payload) }
                    // avih and strh define 56 bytes of fields; what follows is read by no one (zeros may stay).
                    if id == "strh" || id == "avih", payload > 56, try hasData(at + 8 + 56..<chunkEnd) {
                        let slack = at + 8 + 56..<chunkEnd
                        _ = add("avi:\(id)-slack", .content, slack, location: "\(path)/\(id)", detail: "\(slack.count) bytes after the fields of \(id)",
                                unknown: true, action: .zero(slack))
                        layout.seiRanges.append(slack)
                    }
                } else {
                    let loc = "\(path)/\(id)#\(count[id] ?? 1)"
                    switch id {
                    case "JUNK", "junk", "PAD ":
                        if try hasData(at + 8..<chunkEnd) {
                            _ = add("avi:JUNK", .content, range, location: loc, detail: "padding chunk holding \(payload) bytes of old data",
                                    unknown: true, action: .zero(at + 8..<chunkEnd))
                        }
                    case "IDIT", "ISMP":
                        _ = add("avi:\(id)", .time, range, location: loc, detail: id == "IDIT" ? "capture date" : "SMPTE time code",
                                value: ValueText.render(try input.read(at: at + 8, count: Int(min(payload, 64)))[...]), action: .junk(range))
                    case "strd":
                        _ = add("avi:strd", .device, range, location: loc, detail: "stream header data (camera maker data), \(payload) bytes", action: .junk(range))
                    case "strn":
                        _ = add("avi:strn", .content, range, location: loc, detail: "stream name",
                                value: ValueText.render(try input.read(at: at + 8, count: Int(min(payload, 256)))[...]), action: .junk(range))
                    case "_PMX":
                        // Kept or dropped whole: its properties are itemised so that a GPS position inside decides it.
                        let packet = add("avi:_PMX", .content, range, location: loc, detail: "XMP packet, \(payload) bytes", action: .junk(range))
                        if payload <= Int64(ContentInspector.limit) {
                            found.inspect(packet, payload: try input.read(at: at + 8, count: Int(payload)), origin: at + 8)
                        }
                    default:
                        let name = id.filter { $0.isASCII && ($0.isLetter || $0.isNumber) }
                        _ = add("avi:chunk:\(name)", NameClassifier.category(of: name, otherwise: .content), range, location: loc,
                                detail: "unknown \(payload)-byte chunk", unknown: true, action: .junk(range))
                    }
                }
                at = chunkEnd + (payload & 1)
            }
        }

        mutating func info(_ list: Range<Int64>, location: String) throws {
            var mine: [Int] = []
            var at = list.lowerBound + 12
            while at + 8 <= list.upperBound {
                let head = try input.read(at: at, count: 8, format: format, path: location)
                let id = String(decoding: head[0..<4], as: UTF8.self)
                let payload = Int64(ByteOrder.little.u32(head, 4))
                let end = at + 8 + payload
                guard end <= list.upperBound else {
                    throw MetascrubError.malformed(format: format, path: "\(location)/\(id)", offset: at, reason: "chunk extends past its list")
                }
                let data = try input.read(at: at + 8, count: Int(min(payload, 4096)))
                if id != "JUNK" && data.contains(where: { $0 != 0 }) {
                    let name = id.filter { $0.isASCII && ($0.isLetter || $0.isNumber) }
                    let kind = RIFFInfo.classify(id, name: name)
                    mine.append(add("riff:INFO/\(name)", kind.category, at..<end, location: "\(location)/\(name)",
                                    detail: "INFO \(name), \(payload) bytes", value: ValueText.render(data[...]), unknown: kind.unknown,
                                    action: .junk(at..<end)))
                }
                at = end + (payload & 1)
            }
            layout.groups.append((list, mine))
        }

        /// Coded media data and its index, where a cut loses no metadata: the movi list and idx1.
        func isMediaData(at: Int64, id: String, end: Int64) throws -> Bool {
            if id == "idx1" { return true }
            guard id == "LIST", end - at >= 12 else { return false }
            return try input.read(at: at + 8, count: 4).elementsEqual("movi".utf8)
        }

        func hasData(_ range: Range<Int64>) throws -> Bool {
            var at = range.lowerBound
            while at < range.upperBound {
                let n = Int(min(range.upperBound - at, 1 << 20))
                if try input.read(at: at, count: n).contains(where: { $0 != 0 }) { return true }
                at += Int64(n)
            }
            return false
        }
    }

    public func clean(_ input: any ByteSource, scan: ScanResult<AVILayout>, plan: CleanPlan, to output: any OutputSink) throws -> CleanResult {
        let layout = scan.layout
        let removed = Set(scan.items.indices.filter { !plan.keeps($0) })
        var padding = SameOffset.Padding(groups: layout.groups, removed: removed)
        var replaced: [(range: Range<Int64>, bytes: [UInt8])] = []
        for i in removed.sorted() {
            for action in layout.actions[i] ?? [] {
                switch action {
                case .junk(let r): padding.pad(r)
                case .zero(let r): padding.zero(r)
                case .patch(let list): replaced += list
                }
            }
        }
        var patches = InPlacePatches()
        for r in padding.padded {
            patches.add(r.lowerBound, Array("JUNK".utf8) + ByteOrder.little.bytes(UInt32(r.count - 8)))
            patches.zero(r.lowerBound + 8..<r.upperBound)
        }
        for r in padding.zeroed { patches.zero(r) }
        for (r, bytes) in replaced { patches.add(r.lowerBound, bytes) }
        let cut = layout.trailerItem.flatMap { removed.contains($0) ? layout.trailer : nil }
        return try SameOffset.write(patches, trailer: cut, format: Self.format, from: input, to: output, note: SameOffset.padded(
            "metadata chunks were overwritten with JUNK chunks of the same size; no byte position moved, so idx1 and OpenDML indexes stay valid"))
    }

    public func verifyContent(original: any ByteSource, _ before: AVILayout, cleaned: any ByteSource, _ after: AVILayout, result: CleanResult) throws -> ContentCheck {
        let method = "stream headers and formats, movi lists and indexes byte-identical at the same offsets"
        return try SameOffset.verify(original: original, cleaned: cleaned, core: before.core, sameLayout: before.core == after.core && !before.core.isEmpty,
                                     method: method, part: "chunk", holes: before.seiRanges)
    }
}
