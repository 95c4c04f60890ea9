// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// What the Matroska scanner learned, for the cleaner and the verifier.
struct MatroskaLayout {
    enum Action {
        /// Replace the whole element by a zero-filled Void element of the same size.
        case void(Range<Int64>)
        /// Keep a mandatory element (MuxingApp, WritingApp) and zero its string: an empty, NUL-padded string.
        case zeroData(Range<Int64>)
        /// Overwrite bytes with same-length replacements (SEI user data inside blocks).
        case patch([(range: Range<Int64>, bytes: [UInt8])])
    }

    struct Seek {
        var target: Int64
        var range: Range<Int64>
    }

    var actions: [Int: [Action]] = [:]
    /// Elements voided whole when every item inside them is removed (a Tag, Tags, Attachments).
    var groups: [(range: Range<Int64>, items: [Int])] = []
    var seeks: [Seek] = []
    /// Level-1 elements that start with a CRC-32 element: the CRC's data and the range it covers.
    var checksums: [(crc: Range<Int64>, covered: Range<Int64>)] = []
    /// Ranges a decoder needs, compared byte for byte by `verifyContent`: the EBML header, Info's timing,
    /// the track entries' codec fields, Cues and every Cluster.
    var core: [Range<Int64>] = []
    var clusters = 0
    /// H.264/HEVC tracks by track number: NAL length size and codec, for SEI in their blocks.
    var nalTracks: [UInt64: (lengthSize: Int, hevc: Bool)] = [:]
    var blocks: [UInt64: Int] = [:]
    /// SEI payloads a clean may overwrite, and the CRC-32 data of Clusters (recomputed when one changes):
    /// the verifier skips both.
    var seiRanges: [Range<Int64>] = []
    var clusterCRCs: [Range<Int64>] = []
    var trailer: Range<Int64>?
    var trailerItem: Int?
}

/// Matroska and WebM (EBML, RFC 8794/9559): metadata is overwritten in place with Void elements of the same
/// size, so no byte position changes and SeekHead, Cues and Cluster positions stay valid; Clusters (every coded
/// frame) are copied unchanged. MuxingApp and WritingApp are mandatory, so their strings are zeroed instead.
/// CRC-32 elements of changed level-1 elements are recomputed; SeekHead entries that pointed at a removed
/// element are voided too.
public struct MatroskaFormat: FormatHandler {
    public init() {}

    static let format = "Matroska"

    enum ID {
        static let ebml: UInt32 = 0x1A45_DFA3, docType: UInt32 = 0x4282
        static let segment: UInt32 = 0x1853_8067
        static let seekHead: UInt32 = 0x114D_9B74, seek: UInt32 = 0x4DBB, seekID: UInt32 = 0x53AB, seekPosition: UInt32 = 0x53AC
        static let info: UInt32 = 0x1549_A966, tracks: UInt32 = 0x1654_AE6B, cluster: UInt32 = 0x1F43_B675
        static let cues: UInt32 = 0x1C53_BB6B, attachments: UInt32 = 0x1941_A469, chapters: UInt32 = 0x1043_A770
        static let tags: UInt32 = 0x1254_C367, void: UInt32 = 0xEC, crc: UInt32 = 0xBF
        static let tag: UInt32 = 0x7373, targets: UInt32 = 0x63C0, simpleTag: UInt32 = 0x67C8, tagName: UInt32 = 0x45A3
        static let tagString: UInt32 = 0x4487
        static let attachedFile: UInt32 = 0x61A7, fileName: UInt32 = 0x466E, fileMediaType: UInt32 = 0x4660, fileData: UInt32 = 0x465C
        static let trackEntry: UInt32 = 0xAE
        static let topLevel: Set<UInt32> = [segment, seekHead, info, tracks, cluster, cues, attachments, chapters, tags, ebml]
    }

    /// Info children: key, category, action (true: zero the string, the element is mandatory).
    static let infoFields: [UInt32: (String, Category, Bool)] = [
        0x7BA9: ("matroska:Title", .content, false),
        0x4D80: ("matroska:MuxingApp", .software, true),
        0x5741: ("matroska:WritingApp", .software, true),
        0x4461: ("matroska:DateUTC", .time, false),
        0x73A4: ("matroska:SegmentUID", .identity, false),
        0x7384: ("matroska:SegmentFilename", .content, false),
        0x3CB923: ("matroska:PrevUID", .identity, false),
        0x3C83AB: ("matroska:PrevFilename", .content, false),
        0x3EB923: ("matroska:NextUID", .identity, false),
        0x3E83BB: ("matroska:NextFilename", .content, false),
        0x4444: ("matroska:SegmentFamily", .identity, false),
        0x6924: ("matroska:ChapterTranslate", .content, false),
    ]
    /// Info children a decoder needs.
    static let infoCore: Set<UInt32> = [0x2AD7B1, 0x4489]
    /// TrackEntry children that only describe: name, codec name, codec URLs and settings strings.
    static let trackFields: [UInt32: (String, Category)] = [
        0x536E: ("matroska:TrackName", .content),
        0x258688: ("matroska:CodecName", .software),
        0x3A9697: ("matroska:CodecSettings", .software),
        0x3B4040: ("matroska:CodecInfoURL", .software),
        0x26B240: ("matroska:CodecDownloadURL", .software),
    ]
    static let fontTypes: Set<String> = [
        "application/x-truetype-font", "application/x-font-ttf", "application/x-font-otf", "application/x-font",
        "application/vnd.ms-opentype", "application/font-sfnt", "application/x-font-truetype",
    ]

    public func scan(_ input: any ByteSource, options: ScanOptions) throws -> ScanResult {
        var scanner = Scanner(input: input, options: options)
        try scanner.run()
        scanner.finishSEI()
        return ScanResult(items: scanner.items, notes: scanner.notes, layout: scanner.layout)
    }

    struct Scanner {
        let input: any ByteSource
        let options: ScanOptions
        var items: [MetadataItem] = []
        var notes: [Note] = []
        var layout = MatroskaLayout()
        var elements = 0
        var seiTally = SampleSEI.Tally()

        init(input: any ByteSource, options: ScanOptions) {
            self.input = input
            self.options = options
        }

        mutating func add(_ key: String, _ category: Category, _ e: EBMLElement, location: String, detail: String,
                          value: String? = nil, unknown: Bool = false, parent: Int? = nil, action: MatroskaLayout.Action? = nil) -> Int {
            items.append(MetadataItem(key: key, category: category, location: location, offset: e.offset, length: e.end - e.offset,
                                      value: options.includeValues ? value : nil, detail: detail, isUnknown: unknown, parent: parent))
            if let action { layout.actions[items.count - 1, default: []].append(action) }
            return items.count - 1
        }

        mutating func count(_ at: Int64) throws {
            elements += 1
            guard elements <= EBML.maxElements else {
                throw MetascrubError.limitExceeded(format: format, path: "element list", offset: at, limit: "\(EBML.maxElements) elements")
            }
        }

        mutating func run() throws {
            let size = input.size
            var at: Int64 = 0
            var segments = 0
            var sawHeader = false
            while at < size {
                if segments > 0 {
                    // After the segment: more EBML documents are allowed; anything else is a trailer.
                    guard let e = try? EBML.header(input, at: at, limit: size, path: "top level"), e.id == ID.ebml || e.id == ID.segment || e.id == ID.void else {
                        layout.trailer = at..<size
                        items.append(try Trailer.item(key: "matroska:trailer", range: at..<size, in: input, location: "after Segment", after: "the Segment"))
                        layout.trailerItem = items.count - 1
                        break
                    }
                }
                let e = try EBML.header(input, at: at, limit: size, path: "top level", allowCut: true)
                try count(at)
                if e.cut {
                    // Only the Segment may run past the end of the file (a recording cut short); its last
                    // Cluster is then copied as it is.
                    guard e.id == ID.segment else { _ = try EBML.header(input, at: at, limit: size, path: "top level"); break }
                }
                switch e.id {
                case ID.ebml:
                    guard e.size != nil, e.dataSize <= 4096 else {
                        throw MetascrubError.malformed(format: format, path: "EBML header", offset: at, reason: "invalid EBML header size")
                    }
                    let children = try EBML.children(input, of: e, path: "EBML header")
                    if let docType = children.first(where: { $0.id == ID.docType }) {
                        let name = String(decoding: try EBML.bytes(input, docType).prefix { $0 != 0 }, as: UTF8.self)
                        guard name == "matroska" || name == "webm" else {
                            throw MetascrubError.unsupported(format: format, reason: "EBML document type is not Matroska or WebM")
                        }
                    }
                    layout.core.append(e.range)
                    sawHeader = true
                case ID.segment:
                    guard sawHeader else { throw MetascrubError.malformed(format: format, path: "Segment", offset: at, reason: "no EBML header before the Segment") }
                    try segment(e, number: segments)
                    segments += 1
                case ID.void where sawHeader:
                    break
                default:
                    throw MetascrubError.malformed(format: format, path: "top level", offset: at, reason: "expected the EBML header or a Segment")
                }
                at = e.end
            }
            guard segments > 0 else { throw MetascrubError.truncated(format: format, path: "Segment", offset: at, needed: 12) }
        }

        mutating func segment(_ seg: EBMLElement, number: Int) throws {
            let base = seg.dataOffset
            var at = seg.dataOffset
            var n: [UInt32: Int] = [:]
            if seg.cut {
                notes.append(Note(.warning, code: "truncated-segment", "the file ends \(seg.dataOffset + (seg.size ?? 0) - seg.end) bytes before the Segment's declared end; the last Cluster is copied as it is", offset: seg.offset))
            }
            while at < seg.end {
                var e = try EBML.header(input, at: at, limit: seg.end, path: "Segment", allowCut: seg.cut)
                try count(at)
                if e.cut && e.id != ID.cluster {
                    // A cut metadata element cannot be parsed (or removed) reliably.
                    e = try EBML.header(input, at: at, limit: seg.end, path: "Segment")
                }
                if e.size == nil {
                    guard e.id == ID.cluster else {
                        throw MetascrubError.malformed(format: format, path: "Segment", offset: at, reason: "unknown size outside a Cluster")
                    }
                    e.end = try clusterEnd(e, limit: seg.end)
                }
                n[e.id, default: 0] += 1
                let loc = "Segment"
                switch e.id {
                case ID.seekHead: try seekHead(e, base: base)
                case ID.info: try info(e)
                case ID.tracks: try tracks(e)
                case ID.cluster:
                    layout.core.append(e.range)
                    layout.clusters += 1
                    if !e.cut { try clusterSEI(e) }
                case ID.cues: layout.core.append(e.range)
                case ID.tags: try tags(e, number: n[e.id] ?? 1)
                case ID.attachments: try attachments(e)
                case ID.chapters:
                    _ = add("matroska:chapters", .content, e, location: "\(loc)/Chapters", detail: "chapter list, \(e.dataSize) bytes", action: .void(e.range))
                case ID.void:
                    try void(e, location: "\(loc)/Void")
                case ID.crc:
                    break
                default:
                    _ = add(String(format16: "matroska:element:0x", e.id), .content, e, location: "\(loc)/0x\(String(e.id, radix: 16, uppercase: true))",
                            detail: "unknown \(e.dataSize)-byte level-1 element", unknown: true, action: .void(e.range))
                }
                at = e.end
            }
        }

        /// End of an unknown-size Cluster: the first element that is not a Cluster child.
        mutating func clusterEnd(_ cluster: EBMLElement, limit: Int64) throws -> Int64 {
            var at = cluster.dataOffset
            while at < limit {
                let e = try EBML.header(input, at: at, limit: limit, path: "Cluster")
                if ID.topLevel.contains(e.id) { return at }
                guard e.size != nil else {
                    throw MetascrubError.malformed(format: format, path: "Cluster", offset: at, reason: "unknown-size element inside an unknown-size Cluster")
                }
                try count(at)
                at = e.end
            }
            return limit
        }

        mutating func checksum(_ parent: EBMLElement, _ children: [EBMLElement]) {
            if let first = children.first, first.id == ID.crc, first.dataSize == 4 {
                layout.checksums.append((first.data, first.end..<parent.end))
            }
        }

        mutating func seekHead(_ e: EBMLElement, base: Int64) throws {
            let children = try EBML.children(input, of: e, path: "SeekHead")
            checksum(e, children)
            for seek in children where seek.id == ID.seek {
                let fields = try EBML.children(input, of: seek, path: "SeekHead/Seek")
                if let p = fields.first(where: { $0.id == ID.seekPosition }), p.dataSize <= 8 {
                    let position = try EBML.uint(input, p)
                    if position < UInt64(Int64.max / 2) { layout.seeks.append(.init(target: base + Int64(position), range: seek.range)) }
                }
            }
        }

        mutating func info(_ e: EBMLElement) throws {
            let children = try EBML.children(input, of: e, path: "Info")
            checksum(e, children)
            for c in children {
                if let (key, category, mandatory) = MatroskaFormat.infoFields[c.id] {
                    let data = try EBML.bytes(input, c, limit: 4096)
                    guard data.contains(where: { $0 != 0 }) else { continue }  // already empty
                    let name = String(key.dropFirst("matroska:".count))
                    var value: String?
                    if options.includeValues {
                        value = c.id == 0x4461 ? (try? EBML.uint(input, c)).map { "\(Int64(bitPattern: $0) / 1_000_000_000 + 978_307_200) (Unix time)" }
                            : [0x7BA9, 0x4D80, 0x5741, 0x7384, 0x3C83AB, 0x3E83BB].contains(c.id) ? ValueText.render(data[...])
                            : data.map { String($0, radix: 16) }.joined()
                    }
                    _ = add(key, category, c, location: "Segment/Info/\(name)", detail: "\(name), \(c.dataSize) bytes", value: value,
                            action: mandatory ? .zeroData(c.data) : .void(c.range))
                } else if MatroskaFormat.infoCore.contains(c.id) {
                    layout.core.append(c.range)
                } else if c.id != ID.void && c.id != ID.crc {
                    _ = add(String(format16: "matroska:Info:0x", c.id), .content, c, location: "Segment/Info/0x\(String(c.id, radix: 16))",
                            detail: "unknown Info element, \(c.dataSize) bytes", unknown: true, action: .void(c.range))
                }
            }
        }

        mutating func tracks(_ e: EBMLElement) throws {
            let children = try EBML.children(input, of: e, path: "Tracks")
            checksum(e, children)
            var number = 0
            for entry in children where entry.id == ID.trackEntry {
                number += 1
                try noteVideoTrack(entry)
                for c in try EBML.children(input, of: entry, path: "Tracks/TrackEntry") {
                    let loc = "Segment/Tracks/TrackEntry#\(number)"
                    if let (key, category) = MatroskaFormat.trackFields[c.id] {
                        let data = try EBML.bytes(input, c, limit: 4096)
                        guard data.contains(where: { $0 != 0 }) else { continue }
                        _ = add(key, category, c, location: "\(loc)/\(key.dropFirst(9))", detail: "\(key.dropFirst(9)), \(c.dataSize) bytes",
                                value: ValueText.render(data[...]), action: .void(c.range))
                    } else if c.id == 0x23314F, try EBML.float(input, c) == 1.0 {
                        // Deprecated TrackTimecodeScale at its default: only old libmatroska muxers write it.
                        _ = add("matroska:TrackTimestampScale", .software, c, location: "\(loc)/TrackTimestampScale",
                                detail: "deprecated TrackTimestampScale at its default 1.0 (a muxer fingerprint; removing it changes no timing)",
                                action: .void(c.range))
                    } else if c.id != ID.void && c.id != ID.crc {
                        layout.core.append(c.range)
                    }
                }
            }
        }

        mutating func tags(_ e: EBMLElement, number: Int) throws {
            let children = try EBML.children(input, of: e, path: "Tags")
            checksum(e, children)
            var all: [Int] = []
            var tagNumber = 0
            for tag in children where tag.id == ID.tag {
                tagNumber += 1
                var mine: [Int] = []
                let fields = try EBML.children(input, of: tag, path: "Tags/Tag")
                var target = "file"
                if let targets = fields.first(where: { $0.id == ID.targets }) { target = try targetName(targets) }
                for s in fields where s.id == ID.simpleTag {
                    try simpleTag(s, location: "Segment/Tags#\(number)/Tag#\(tagNumber)[\(target)]", parent: nil, depth: 0, into: &mine)
                }
                layout.groups.append((tag.range, mine))
                all += mine
            }
            if all.isEmpty && children.contains(where: { $0.id == ID.tag }) {
                // Tags with only targets: nothing to name, but nothing a player needs either.
                all.append(add("matroska:tags", .content, e, location: "Segment/Tags#\(number)", detail: "tags without names, \(e.dataSize) bytes",
                               action: .void(e.range)))
            }
            layout.groups.append((e.range, all))
        }

        func targetName(_ targets: EBMLElement) throws -> String {
            let fields = try EBML.children(input, of: targets, path: "Tags/Tag/Targets")
            let names: [UInt32: String] = [0x63C5: "track", 0x63C9: "edition", 0x63C4: "chapter", 0x63C6: "attachment"]
            let kinds = fields.compactMap { names[$0.id] }
            if let level = fields.first(where: { $0.id == 0x68CA }), let v = try? EBML.uint(input, level) {
                return (["level \(v)"] + kinds).joined(separator: ",")
            }
            return kinds.isEmpty ? "file" : kinds.joined(separator: ",")
        }

        mutating func simpleTag(_ s: EBMLElement, location: String, parent: Int?, depth: Int, into mine: inout [Int]) throws {
            guard depth < EBML.maxDepth else {
                throw MetascrubError.limitExceeded(format: format, path: "SimpleTag", offset: s.offset, limit: "\(EBML.maxDepth) nested SimpleTags")
            }
            let fields = try EBML.children(input, of: s, path: "SimpleTag")
            var name = "unnamed"
            if let n = fields.first(where: { $0.id == ID.tagName }) {
                name = String(decoding: try EBML.bytes(input, n, limit: 256).prefix { $0 != 0 }, as: UTF8.self)
                    .filter { $0.isASCII && ($0.isLetter || $0.isNumber || "_-.".contains($0)) }
                if name.isEmpty { name = "unnamed" }
            }
            let upper = name.uppercased()
            let category: Category = upper.hasPrefix("_STATISTICS_WRITING_APP") || upper == "ENCODER" || upper == "ENCODER_SETTINGS" ? .software
                : upper.hasPrefix("_STATISTICS_WRITING_DATE") ? .time
                : NameClassifier.category(of: name, otherwise: .content)
            var value: String?
            if options.includeValues, let v = fields.first(where: { $0.id == ID.tagString }) { value = ValueText.render(try EBML.bytes(input, v)[...]) }
            let item = add("matroska:tag:\(name)", category, s, location: "\(location)/\(name)", detail: "tag \(name), \(s.dataSize) bytes",
                           value: value, parent: parent, action: parent == nil ? .void(s.range) : nil)
            mine.append(item)
            for nested in fields where nested.id == ID.simpleTag {
                try simpleTag(nested, location: "\(location)/\(name)", parent: item, depth: depth + 1, into: &mine)
            }
        }

        mutating func attachments(_ e: EBMLElement) throws {
            let children = try EBML.children(input, of: e, path: "Attachments")
            checksum(e, children)
            var all: [Int] = []
            var number = 0
            for file in children where file.id == ID.attachedFile {
                number += 1
                let fields = try EBML.children(input, of: file, path: "Attachments/AttachedFile")
                let type = try fields.first { $0.id == ID.fileMediaType }.map { String(decoding: try EBML.bytes(input, $0, limit: 256).prefix { $0 != 0 }, as: UTF8.self) } ?? ""
                let fileName = try fields.first { $0.id == ID.fileName }.map { String(decoding: try EBML.bytes(input, $0, limit: 1024).prefix { $0 != 0 }, as: UTF8.self) } ?? ""
                let size = fields.first { $0.id == ID.fileData }?.dataSize ?? 0
                let lowerName = fileName.lowercased()
                let font = MatroskaFormat.fontTypes.contains(type.lowercased()) || type.lowercased().hasPrefix("font/")
                    || [".ttf", ".otf", ".ttc", ".woff", ".woff2"].contains { lowerName.hasSuffix($0) }
                let safeType = type.filter { $0.isASCII && ($0.isLetter || $0.isNumber || "/-.+".contains($0)) }
                let item = add("matroska:attachment", font ? .rendering : .embedded, file, location: "Segment/Attachments/AttachedFile#\(number)",
                               detail: font ? "font attachment (\(safeType)), \(size) bytes: subtitles need it" : "\(safeType.isEmpty ? "untyped" : safeType) attachment, \(size) bytes",
                               value: fileName, action: .void(file.range))
                all.append(item)
            }
            layout.groups.append((e.range, all))
        }

        mutating func void(_ e: EBMLElement, location: String) throws {
            var at = e.dataOffset
            while at < e.end {
                let n = Int(min(e.end - at, 1 << 20))
                if try input.read(at: at, count: n).contains(where: { $0 != 0 }) {
                    _ = add("matroska:void", .content, e, location: location, detail: "Void element holding \(e.dataSize) bytes of old data",
                            action: .zeroData(e.data))
                    return
                }
                at += Int64(n)
            }
        }
    }

    public func clean(_ input: any ByteSource, scan: ScanResult, plan: CleanPlan, to output: any OutputSink) throws -> CleanResult {
        guard let layout = scan.layout as? MatroskaLayout else {
            throw MetascrubError.verificationFailed(reason: "Matroska cleaner was given another format's scan")
        }
        // Removed items, with the blocks that hold a removed item.
        var removed = Set(scan.items.indices.filter { !plan.keeps($0) })
        for i in Array(removed) {
            var p = scan.items[i].parent
            var depth = 0
            while let parent = p, parent < scan.items.count, depth < 64 {
                removed.insert(parent)
                p = scan.items[parent].parent
                depth += 1
            }
        }
        var voided: [Range<Int64>] = []
        func inside(_ r: Range<Int64>) -> Bool { voided.contains { $0.lowerBound <= r.lowerBound && r.upperBound <= $0.upperBound } }
        for group in layout.groups.sorted(by: { $0.range.count > $1.range.count })
        where !group.items.isEmpty && group.items.allSatisfy({ removed.contains($0) }) && !inside(group.range) {
            voided.append(group.range)
        }
        var zeroed: [Range<Int64>] = []
        var replaced: [(range: Range<Int64>, bytes: [UInt8])] = []
        for i in removed.sorted() {
            for action in layout.actions[i] ?? [] {
                switch action {
                case .void(let r) where !inside(r): voided.append(r)
                case .zeroData(let r) where !inside(r): zeroed.append(r)
                case .patch(let list): replaced += list.filter { !inside($0.range) }
                default: break
                }
            }
        }
        // SeekHead entries that point at a removed level-1 element go too.
        let starts = Set(voided.map(\.lowerBound))
        for seek in layout.seeks where starts.contains(seek.target) && !inside(seek.range) {
            voided.append(seek.range)
        }
        var patches = InPlacePatches()
        for r in voided {
            guard let header = EBML.void(Int64(r.count)) else {
                throw MetascrubError.malformed(format: Self.format, path: "Void", offset: r.lowerBound, reason: "element too small to replace")
            }
            patches.add(r.lowerBound, header)
            patches.zero(r.lowerBound + Int64(header.count)..<r.upperBound)
        }
        for r in zeroed { patches.zero(r) }
        for (r, bytes) in replaced { patches.add(r.lowerBound, bytes) }
        for (crc, covered) in layout.checksums where !inside(crc) && patches.ranges.contains(where: { $0.overlaps(covered) }) {
            let value = try patches.crc32(input, covered)
            patches.add(crc.lowerBound, ByteOrder.little.bytes(value))
        }
        var size = input.size
        if let trailer = layout.trailer, let item = layout.trailerItem, removed.contains(item) { size = trailer.lowerBound }
        try patches.plan(size: size, format: Self.format).write(from: input, to: output)
        var result = CleanResult(method: .remux)
        result.notes.append(Note(.info, code: "in-place-padding",
                                 "metadata elements were overwritten with Void elements of the same size; no byte position moved, so Cues and SeekHead stay valid"))
        return result
    }

    public func verifyContent(
        original: any ByteSource, originalScan: ScanResult, cleaned: any ByteSource, cleanedScan: ScanResult, result: CleanResult
    ) throws -> ContentCheck {
        guard let before = originalScan.layout as? MatroskaLayout, let after = cleanedScan.layout as? MatroskaLayout else {
            return ContentCheck(method: "none", passed: false, detail: "missing layout")
        }
        let method = "EBML header, Info timing, track codec fields, Cues and all \(before.clusters) Clusters byte-identical at the same offsets"
        guard before.core == after.core, before.clusters == after.clusters else {
            return ContentCheck(method: method, passed: false, detail: "element layout changed")
        }
        let holes = (before.seiRanges + before.clusterCRCs).sorted { $0.lowerBound < $1.lowerBound }
        if let r = try before.core.first(where: { try !ByteComparison.equal(original, $0, cleaned, $0, skipping: holes) }) {
            return ContentCheck(method: method, passed: false, detail: "element at \(r.lowerBound) differs")
        }
        let skipped = before.seiRanges.isEmpty ? "" : " outside neutralised SEI user data"
        return ContentCheck(method: method + skipped, passed: true)
    }
}

extension String {
    /// "prefix" followed by the hexadecimal value.
    init(format16 prefix: String, _ value: UInt32) {
        self = prefix + String(value, radix: 16, uppercase: true)
    }
}
