// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

extension MatroskaFormat {
    struct Scanner: LayoutScanner {
        let input: any ByteSource
        var found: ItemCollector
        var layout = MatroskaLayout()
        var elements = 0
        var seiTally = SampleSEI.Tally()
        /// Text subtitle tracks by number, and Cue entries by track (for dropping a telemetry track).
        var textTracks: [UInt64: TextTrack] = [:]
        var cueEntries: [UInt64: [Range<Int64>]] = [:]

        init(input: any ByteSource, options: ScanOptions) {
            self.input = input
            found = ItemCollector(options)
        }

        mutating func add(_ key: String, _ category: Category, _ e: EBMLElement, location: String, detail: String,
                          value: String? = nil, unknown: Bool = false, parent: Int? = nil, action: MatroskaLayout.Action? = nil) -> Int {
            let item = found.add(key, category, e.offset..<e.end, location: location, value: value, detail: detail, unknown: unknown,
                                 parent: parent)
            if let action { layout.actions[item, default: []].append(action) }
            return item
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
                        layout.trailerItem = try found.trailer("matroska:trailer", at..<size, in: input, location: "after Segment", after: "the Segment")
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
            finishSEI()
            finishTextTracks()
        }

        mutating func segment(_ seg: EBMLElement, number: Int) throws {
            let base = seg.dataOffset
            var at = seg.dataOffset
            var n: [UInt32: Int] = [:]
            if seg.cut {
                found.note(Note(.warning, code: "truncated-segment", "the file ends \(seg.dataOffset + (seg.size ?? 0) - seg.end) bytes before the Segment's declared end; the last Cluster is copied as it is (less any metadata blocks in it)", offset: seg.offset))
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
                    try cluster(e)
                case ID.cues:
                    layout.core.append(e.range)
                    try cues(e)
                case ID.tags: try tags(e, number: n[e.id] ?? 1)
                case ID.attachments: try attachments(e)
                case ID.chapters:
                    let chapters = add("matroska:chapters", .content, e, location: "\(loc)/Chapters", detail: "chapter list, \(e.dataSize) bytes", action: .void(e.range))
                    found.inspect(chapters, payload: try EBML.bytes(input, e, limit: ContentInspector.limit), origin: e.dataOffset)
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
                    if found.options.includeValues {
                        value = c.id == 0x4461 ? (try? EBML.uint(input, c)).map { "\(Int64(bitPattern: $0) / 1_000_000_000 + 978_307_200) (Unix time)" }
                            : [0x7BA9, 0x4D80, 0x5741, 0x7384, 0x3C83AB, 0x3E83BB].contains(c.id) ? ValueText.render(data[...])
                            : data.map { String($0, radix: 16) }.joined()
                    }
                    let item = add(key, category, c, location: "Segment/Info/\(name)", detail: "\(name), \(c.dataSize) bytes",
                                   value: value, action: mandatory ? .zeroData(c.data) : .void(c.range))
                    // A title is kept with content (`location`): what it says is read like any text.
                    if c.id == 0x7BA9 { found.inspect(item, payload: data, origin: c.dataOffset) }
                } else if MatroskaFormat.infoCore.contains(c.id) {
                    layout.core.append(c.range)
                } else if c.id == ID.void {
                    try void(c, location: "Segment/Info/Void")
                } else if c.id != ID.crc {
                    _ = add(String(format16: "matroska:Info:0x", c.id), .content, c, location: "Segment/Info/0x\(String(c.id, radix: 16))",
                            detail: "unknown Info element, \(c.dataSize) bytes", unknown: true, action: .void(c.range))
                }
            }
        }

        mutating func tracks(_ e: EBMLElement) throws {
            let children = try EBML.children(input, of: e, path: "Tracks")
            checksum(e, children)
            var number = 0
            for v in children where v.id == ID.void { try void(v, location: "Segment/Tracks/Void") }
            for c in children where ![ID.trackEntry, ID.void, ID.crc].contains(c.id) {
                _ = add(String(format16: "matroska:Tracks:0x", c.id), .content, c, location: "Segment/Tracks/0x\(String(c.id, radix: 16))",
                        detail: "Tracks element no reader knows, \(c.dataSize) bytes", unknown: true, action: .void(c.range))
            }
            for entry in children where entry.id == ID.trackEntry {
                number += 1
                try noteVideoTrack(entry)
                let text = try noteTextTrack(entry, entryNumber: number)
                let fields = try EBML.children(input, of: entry, path: "Tracks/TrackEntry")
                let codec = try fields.first { $0.id == 0x86 }.map { String(decoding: try EBML.bytes(input, $0, limit: 64), as: UTF8.self) } ?? ""
                let encoded = fields.contains { $0.id == 0x6D80 }
                for c in fields {
                    let loc = "Segment/Tracks/TrackEntry#\(number)"
                    if !MatroskaTrackEntry.known.contains(c.id) {
                        _ = add(String(format16: "matroska:TrackEntry:0x", c.id), .content, c, location: "\(loc)/0x\(String(c.id, radix: 16))",
                                detail: "TrackEntry element no reader knows, \(c.dataSize) bytes", unknown: true, action: .void(c.range))
                        continue
                    }
                    if c.id == ID.void { try void(c, location: "\(loc)/Void") }
                    if c.id == 0x63A2, !encoded, codec.hasPrefix("S_TEXT/ASS") || codec.hasPrefix("S_TEXT/SSA") || codec.hasPrefix("S_ASS") || codec.hasPrefix("S_SSA") {
                        try scriptHeader(c, location: loc)
                    }
                    if let (key, category) = MatroskaFormat.trackFields[c.id] {
                        let data = try EBML.bytes(input, c, limit: 4096)
                        guard data.contains(where: { $0 != 0 }) else { continue }
                        let item = add(key, category, c, location: "\(loc)/\(key.dropFirst(9))",
                                       detail: "\(key.dropFirst(9)), \(c.dataSize) bytes", value: ValueText.render(data[...]),
                                       action: .void(c.range))
                        if category != .location { found.inspect(item, payload: data, origin: c.dataOffset) }
                    } else if c.id == 0x23314F, try EBML.float(input, c) == 1.0 {
                        // Deprecated TrackTimecodeScale at its default: only old libmatroska muxers write it.
                        _ = add("matroska:TrackTimestampScale", .software, c, location: "\(loc)/TrackTimestampScale",
                                detail: "deprecated TrackTimestampScale at its default 1.0 (a muxer fingerprint; removing it changes no timing)",
                                action: .void(c.range))
                    } else if c.id != ID.void && c.id != ID.crc {
                        // A text track may be dropped whole (telemetry): its fields are compared only where it stays.
                        if text { layout.textCore.append(c.range) } else { layout.core.append(c.range) }
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
            if found.options.includeValues, let v = fields.first(where: { $0.id == ID.tagString }) { value = ValueText.render(try EBML.bytes(input, v)[...]) }
            let item = add("matroska:tag:\(name)", category, s, location: "\(location)/\(name)", detail: "tag \(name), \(s.dataSize) bytes",
                           value: value, parent: parent, action: parent == nil ? .void(s.range) : nil)
            mine.append(item)
            // A tag is kept or dropped whole: a position or metadata block in its value decides it.
            for v in fields where v.id == ID.tagString || v.id == 0x4485 /* TagBinary */ {
                mine += found.inspect(item, payload: try EBML.bytes(input, v, limit: ContentInspector.limit), origin: v.dataOffset)
            }
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
                // What the bytes are decides, not the name or the MIME type: a "font.ttf" holding a photo is a photo.
                let head = try fields.first { $0.id == ID.fileData }.map { try EBML.bytes(input, $0, limit: 4) } ?? []
                let font = MatroskaFormat.isFont(head)
                let safeType = type.filter { $0.isASCII && ($0.isLetter || $0.isNumber || "/-.+".contains($0)) }
                let item = add("matroska:attachment", font ? .rendering : .embedded, file, location: "Segment/Attachments/AttachedFile#\(number)",
                               detail: font ? "font attachment (\(safeType)), \(size) bytes: subtitles need it"
                                : "\(safeType.isEmpty ? "untyped" : safeType) attachment, \(size) bytes\(MatroskaFormat.fontTypes.contains(type.lowercased()) || type.lowercased().hasPrefix("font/") ? " whose content is not a font" : "")",
                               value: fileName, action: .void(file.range))
                all.append(item)
                // Kept cleaned only when its label agrees that it is an image (cover art); a photo labelled as
                // something else is a hiding place, not a cover, and goes under `clean` as under `remove`.
                if !font, type.lowercased().hasPrefix("image/"), let data = fields.first(where: { $0.id == ID.fileData }) {
                    try itemiseAttachment(data, item: item)
                }
            }
            layout.groups.append((e.range, all))
        }

        mutating func void(_ e: EBMLElement, location: String) throws {
            var at = e.dataOffset
            while at < e.end {
                let n = Int(min(e.end - at, 1 << 20))
                if try input.read(at: at, count: n).contains(where: { $0 != 0 }) {
                    // Padding holds zeros; anything else in it no reader reads.
                    _ = add("matroska:void", .content, e, location: location, detail: "Void element holding \(e.dataSize) bytes of old data",
                            unknown: true, action: .zeroData(e.data))
                    return
                }
                at += Int64(n)
            }
        }
    }
}
