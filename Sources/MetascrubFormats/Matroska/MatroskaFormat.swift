// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// What the Matroska scanner learned, for the cleaner and the verifier.
public struct MatroskaLayout: Sendable {
    enum Action {
        /// Replace the whole element by a zero-filled Void element of the same size.
        case void(Range<Int64>)
        /// Keep a mandatory element (MuxingApp, WritingApp) and zero its string: an empty, NUL-padded string.
        case zeroData(Range<Int64>)
        /// Overwrite bytes with same-length replacements (SEI user data inside blocks).
        case patch([(range: Range<Int64>, bytes: [UInt8])])
        /// Replace each element by a Void of the same size (every block and Cue entry of a dropped track).
        case voidEach([Range<Int64>])
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
    /// Motion-JPEG tracks (`V_MJPEG`): every block is a JPEG whose APPn/COM segments are looked into.
    var jpegTracks: Set<UInt64> = []
    /// Whether any track's blocks are looked into.
    var inspectsBlocks: Bool { !nalTracks.isEmpty || !jpegTracks.isEmpty }
    var blocks: [UInt64: Int] = [:]
    /// SEI payloads a clean may overwrite, and the CRC-32 data of Clusters (recomputed when one changes):
    /// the verifier skips both.
    var seiRanges: [Range<Int64>] = []
    var clusterCRCs: [Range<Int64>] = []
    var trailer: Range<Int64>?
    var trailerItem: Int?
    /// Ranges inside `core` a clean may void (blocks and Cue entries of a telemetry track, elements a Cluster
    /// does not define, the Cues CRC-32): the verifier skips them.
    var holes: [Range<Int64>] = []
    /// Codec fields of text tracks, compared where the track stays.
    var textCore: [Range<Int64>] = []
    /// Attachments looked into as embedded files: item → their FileData element and its header size.
    var attachmentData: [Int: (element: Range<Int64>, headerSize: Int)] = [:]
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

    /// A font by its magic bytes: TrueType (0x00010000, `true`), OpenType (`OTTO`), a collection (`ttcf`),
    /// WOFF/WOFF2.
    static func isFont(_ head: [UInt8]) -> Bool {
        head == [0, 1, 0, 0] || [Array("OTTO".utf8), Array("true".utf8), Array("ttcf".utf8), Array("wOFF".utf8), Array("wOF2".utf8)].contains(head)
    }

    public func scan(_ input: any ByteSource, options: ScanOptions) throws -> ScanResult<MatroskaLayout> {
        try Scanner.scan(input, options: options)
    }

    public func clean(_ input: any ByteSource, scan: ScanResult<MatroskaLayout>, plan: CleanPlan, to output: any OutputSink) throws -> CleanResult {
        let layout = scan.layout
        // Attachments kept cleaned inside: their own items are their handler's business, not removals here.
        let cleaned = try scan.cleanedEmbeddedFiles(plan)
        let inside = Set(scan.items.indices.filter { Self.isInside(cleaned, $0, scan.items) })
        // Removed items, with the blocks that hold a removed item.
        var removed = Set(scan.items.indices.filter { !plan.keeps($0) && cleaned[$0] == nil && !inside.contains($0) })
        for i in Array(removed) {
            var p = scan.items[i].parent
            var depth = 0
            while let parent = p, parent < scan.items.count, depth < 64 {
                removed.insert(parent)
                p = scan.items[parent].parent
                depth += 1
            }
        }
        var padding = SameOffset.Padding(groups: layout.groups, removed: removed, outermostOnly: true)
        var replaced: [(range: Range<Int64>, bytes: [UInt8])] = []
        var voids: [Range<Int64>] = []
        for i in removed.sorted() {
            for action in layout.actions[i] ?? [] {
                switch action {
                case .void(let r): padding.pad(r)
                case .zeroData(let r): padding.zero(r)
                case .patch(let list): replaced += list
                case .voidEach(let list): voids += list
                }
            }
        }
        // SeekHead entries that point at a removed level-1 element go too.
        let starts = Set(padding.padded.map(\.lowerBound))
        for seek in layout.seeks where starts.contains(seek.target) {
            padding.pad(seek.range)
        }
        var patches = InPlacePatches()
        // Many small elements (a block per frame): written directly, not checked against each other.
        for r in padding.padded + voids.filter({ !padding.covers($0) }) {
            guard let header = EBML.void(Int64(r.count)) else {
                throw MetascrubError.malformed(format: Self.format, path: "Void", offset: r.lowerBound, reason: "element too small to replace")
            }
            patches.add(r.lowerBound, header)
            patches.zero(r.lowerBound + Int64(header.count)..<r.upperBound)
        }
        for r in padding.zeroed { patches.zero(r) }
        for (r, bytes) in replaced where !padding.covers(r) { patches.add(r.lowerBound, bytes) }
        for (item, picture) in cleaned.sorted(by: { $0.key < $1.key }) {
            let (offset, bytes) = try layout.fileData(item, picture: picture, location: scan.items[item].location)
            patches.add(offset, bytes)
        }
        let changed = patches.ranges.sorted { $0.lowerBound < $1.lowerBound }
        for (crc, covered) in layout.checksums where !padding.covers(crc) && Self.overlaps(changed, covered) {
            let value = try patches.crc32(input, covered)
            patches.add(crc.lowerBound, ByteOrder.little.bytes(value))
        }
        let cut = layout.trailerItem.flatMap { removed.contains($0) ? layout.trailer : nil }
        return try SameOffset.write(patches, trailer: cut, format: Self.format, from: input, to: output, note: SameOffset.padded(
            "metadata elements were overwritten with Void elements of the same size; no byte position moved, so Cues and SeekHead stay valid"))
    }

    public func verifyContent(original: any ByteSource, _ before: MatroskaLayout, cleaned: any ByteSource, _ after: MatroskaLayout, result: CleanResult) throws -> ContentCheck {
        let method = "EBML header, Info timing, track codec fields, Cues and all \(before.clusters) Clusters byte-identical at the same offsets"
        // Text tracks that stay keep their codec fields byte for byte; a dropped one has no entry left to compare.
        let kept = Set(after.textCore.map(\.lowerBound))
        return try SameOffset.verify(original: original, cleaned: cleaned, core: before.core + before.textCore.filter { kept.contains($0.lowerBound) },
                                     sameLayout: before.core == after.core && before.clusters == after.clusters,
                                     method: method, part: "element",
                                     holes: (before.seiRanges + before.clusterCRCs + before.holes).sorted { $0.lowerBound < $1.lowerBound })
    }

    /// Whether an ancestor of item `index` is an embedded file cleaned by its own handler.
    static func isInside(_ cleaned: [Int: [UInt8]], _ index: Int, _ items: [MetadataItem]) -> Bool {
        var parent = items[index].parent
        var depth = 0
        while let p = parent, items.indices.contains(p), depth < 64 {
            if cleaned[p] != nil { return true }
            parent = items[p].parent
            depth += 1
        }
        return false
    }

    /// Whether any of `sorted` (by lower bound, not overlapping) overlaps `range`.
    static func overlaps(_ sorted: [Range<Int64>], _ range: Range<Int64>) -> Bool {
        var lo = 0, hi = sorted.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if sorted[mid].upperBound <= range.lowerBound { lo = mid + 1 } else { hi = mid }
        }
        return lo < sorted.count && sorted[lo].lowerBound < range.upperBound
    }
}

extension String {
    /// "prefix" followed by the hexadecimal value.
    init(format16 prefix: String, _ value: UInt32) {
        self = prefix + String(value, radix: 16, uppercase: true)
    }
}
