// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// Lists every metadata item of an MP4/MOV/M4A/3GP file: `udta` atoms and `meta` keys/ilst entries at movie
/// and track level, XMP and vendor `uuid` boxes, padding that still holds bytes, header times, handler and
/// compressor names, timed-metadata and chapter tracks, encoder SEI in H.264/HEVC streams, and trailers.
struct MP4Scanner {
    let source: any ByteSource
    let reader: BoxReader
    var found: ItemCollector
    var layout: MP4Layout

    /// Padding boxes up to this size are read to tell zeros from left-over bytes.
    static let paddingCheckLimit: Int64 = 1 << 20
    /// Seconds between 1904-01-01 (QuickTime epoch) and 1970-01-01.
    static let macEpochOffset: Int64 = 2_082_844_800

    static func scan(_ source: any ByteSource, format: String, options: ScanOptions) throws -> ScanResult<MP4Layout> {
        let reader = BoxReader(source, format: format)
        var found = ItemCollector(options)
        let listing = try found.topLevel(reader)
        guard !listing.boxes.isEmpty else {
            throw MetascrubError.malformed(format: format, path: "top level", offset: 0, reason: "no boxes")
        }
        var scanner = MP4Scanner(source: source, reader: reader, found: found,
                                 layout: MP4Layout(format: format, top: listing.boxes, trailer: listing.leftover))
        try scanner.run()
        return scanner.found.result(scanner.layout)
    }

    var format: String { layout.format }

    @discardableResult
    mutating func add(_ key: String, _ category: Category, _ box: Box, detail: String, value: @autoclosure () -> String? = nil,
                      unknown: Bool = false, parent: Int? = nil, edit: MP4Edit) -> Int {
        let item = found.add(key, category, location: box.path, offset: box.offset, length: box.size, value: value(), detail: detail,
                             unknown: unknown, parent: parent)
        layout.edits[item] = edit
        return item
    }

    mutating func run() throws {
        let moovs = layout.top.indices.filter { layout.top[$0].type == "moov" }
        guard moovs.count <= 1 else {
            throw MetascrubError.malformed(format: format, path: "moov", offset: layout.top[moovs[1]].offset, reason: "more than one movie box")
        }
        if let index = moovs.first {
            let moov = try MovieNode.parse(layout.top[index], reader: reader)
            layout.moov = moov
            layout.moovIndex = index
            try scanMovie(moov)
        } else if !layout.top.contains(where: { $0.type == "moof" }) {
            throw MetascrubError.malformed(format: format, path: "moov", offset: 0, reason: "no movie box")
        }
        for (index, box) in layout.top.enumerated() where index != layout.moovIndex {
            try scanTopLevel(box, index: index)
        }
        if let trailer = layout.trailer {
            layout.trailerItem = found.items.count
            found.items.append(try Trailer.item(key: "mp4:trailer", range: trailer, in: source, location: "trailer", after: "the last box"))
        }
        try scanStreamSEI()
        try scanUnreferenced()
        layout.seiRanges.sort { $0.lowerBound < $1.lowerBound }
        if layout.fragmented {
            found.notes.append(Note(.info, code: "mp4-fragmented", "fragmented movie: fragments are copied unchanged; only the movie box is rewritten"))
        }
    }

    // MARK: - Top level

    mutating func scanTopLevel(_ box: Box, index: Int) throws {
        switch box.type {
        case "ftyp":
            try scanBrands(box)
        case "mdat", "sidx", "ssix", "styp", "pdin", "mfra", "moof", "mvex":
            if ["moof", "mfra"].contains(box.type) { layout.parsedTop[index] = try MovieNode.parse(box, reader: reader) }
        case "free", "skip", "wide":
            try scanPadding(box)
        case "uuid":
            try scanUUID(box)
        case "udta":
            let node = try MovieNode.parse(box, reader: reader)
            layout.parsedTop[index] = node
            try scanUserData(node)
        case "meta":
            let node = try MovieNode.parse(box, reader: reader)
            layout.parsedTop[index] = node
            try scanMeta(node)
        case "prft":
            add("mp4:producer-time", .time, box, detail: "producer reference time (wall clock of capture)", edit: .drop(box))
        case "pnot", "PICT":
            add("mp4:preview", .embedded, box, detail: "QuickTime preview (\(box.type))", edit: .drop(box))
        case "emsg":
            add("mp4:event-message", .content, box, detail: "event message box", edit: .drop(box))
        default:
            add("mp4:box/\(box.type)", NameClassifier.category(of: box.type.description, otherwise: .content), box,
                detail: "unknown top-level box, \(box.size) bytes", unknown: true, edit: .drop(box))
        }
    }

    /// Where the sample data a cut or trimmed file ends in starts: the payload of its last box, when that is `mdat`.
    var cutSampleData: Int64? {
        guard let last = layout.top.last, last.type == "mdat" else { return nil }
        return last.payloadOffset
    }

    mutating func scanPadding(_ box: Box) throws {
        guard box.payloadSize > 0 else { return }
        if box.payloadSize <= Self.paddingCheckLimit {
            let bytes = try source.read(at: box.payloadOffset, count: Int(box.payloadSize), format: format, path: box.path)
            if bytes.allSatisfy({ $0 == 0 }) { return }
        }
        // Zeros are padding; other bytes in a padding box are read by no one.
        add("mp4:padding", .content, box, detail: "\(box.type) box whose \(box.payloadSize) bytes are not zero (old data)", unknown: true,
            edit: .drop(box))
    }

    mutating func scanUUID(_ box: Box) throws {
        let uuid = box.extendedType ?? []
        if uuid == BoxUUID.xmp {
            try scanXMP(box, payloadOffset: box.payloadOffset)
        } else if uuid == BoxUUID.c2pa {
            let store = add("jumbf:c2pa", .provenance, box, detail: "C2PA manifest (uuid box)", edit: .drop(box))
            try found.c2paUUID(box, store: store, source: source)
        } else {
            add("mp4:uuid/\(BoxUUID.hex(uuid))", .device, box, detail: "vendor uuid box, \(box.size) bytes", unknown: true, edit: .drop(box))
        }
    }

    mutating func scanXMP(_ box: Box, payloadOffset: Int64) throws {
        let count = box.end - payloadOffset
        guard count <= Int64(reader.limits.maxPayloadRead) else {
            throw MetascrubError.limitExceeded(format: format, path: box.path, offset: box.offset, limit: "\(reader.limits.maxPayloadRead) bytes of XMP")
        }
        let packet = try source.read(at: payloadOffset, count: Int(count), format: format, path: box.path)
        let first = found.items.count
        let options = found.options
        let content = found.lists { items, notes in
            EmbeddedMetadata.xmpRecord(packet, origin: payloadOffset, location: box.path, options: options, into: &items, notes: &notes)
        }
        // Every XMP property decides for the packet; the packet item (first) carries the edit.
        layout.edits[first] = .xmp(box, content)
        for i in first + 1..<max(first + 1, found.items.count) where layout.edits[i] == nil { layout.edits[i] = MP4Edit.none }
    }

    // MARK: - Movie

    mutating func scanMovie(_ moov: MovieNode) throws {
        for child in moov.children {
            switch child.type {
            case "mvhd": try scanTimes(child.box, key: "mp4:movie-time", what: "movie header")
            case "trak": try scanTrack(child, movie: moov)
            case "udta": try scanUserData(child)
            case "meta": try scanMeta(child)
            case "uuid": try scanUUID(child.box)
            case "free", "skip", "wide": try scanPadding(child.box)
            case "iods", "mvex", "prfl", "clip", "ctab", "htka": break
            case "cmov":
                throw MetascrubError.unsupported(format: format, reason: "compressed movie headers (cmov) are not supported; nothing was written")
            default:
                add("mp4:box/\(child.type)", NameClassifier.category(of: child.type.description, otherwise: .content), child.box,
                    detail: "unknown movie box, \(child.box.size) bytes", unknown: true, edit: .drop(child.box))
            }
        }
        try classifyTracks(moov)
    }

    /// Creation and modification times of a movie, track or media header: zeroed, since the box must stay.
    mutating func scanTimes(_ box: Box, key: String, what: String) throws {
        let payload = try reader.payload(of: box)
        guard payload.count >= 12 else { throw MetascrubError.malformed(format: format, path: box.path, offset: box.offset, reason: "header too short") }
        let width = payload[0] == 1 ? 8 : 4
        guard payload.count >= 4 + 2 * width else { throw MetascrubError.malformed(format: format, path: box.path, offset: box.offset, reason: "header too short") }
        var c = ByteCursor(payload, origin: box.payloadOffset, format: format, path: box.path, position: 4)
        let created = try c.uint(size: width), modified = try c.uint(size: width)
        guard created != 0 || modified != 0 else { return }
        let range = (box.payloadOffset + 4)..<(box.payloadOffset + 4 + Int64(2 * width))
        add(key, .time, box, detail: "\(what) creation and modification times", value: Self.date(created),
            edit: .patch([(range, Array(repeating: 0, count: 2 * width))]))
    }

    static func date(_ seconds: UInt64) -> String {
        let unix = Int64(clamping: seconds) - macEpochOffset
        let days = unix >= 0 ? unix / 86400 : (unix - 86399) / 86400
        let secs = unix - days * 86400
        // Civil date from days since 1970 (Howard Hinnant's algorithm).
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        let y = yoe + era * 400 + (m <= 2 ? 1 : 0)
        func two(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(y)-\(two(m))-\(two(d)) \(two(secs / 3600)):\(two(secs % 3600 / 60)):\(two(secs % 60)) UTC"
    }

    mutating func scanTrack(_ trak: MovieNode, movie: MovieNode) throws {
        guard let tkhd = trak.child("tkhd") else {
            throw MetascrubError.malformed(format: format, path: trak.box.path, offset: trak.box.offset, reason: "track without a track header")
        }
        let header = try reader.payload(of: tkhd.box)
        let idOffset = header.first == 1 ? 20 : 12
        guard header.count >= idOffset + 4 else {
            throw MetascrubError.malformed(format: format, path: tkhd.box.path, offset: tkhd.box.offset, reason: "track header too short")
        }
        let id = UInt32(BigEndian.u32(header, idOffset))
        try scanTimes(tkhd.box, key: "mp4:track-time", what: "track \(id) header")
        if let mdhd = trak.descendant("mdia/mdhd") { try scanTimes(mdhd.box, key: "mp4:media-time", what: "track \(id) media header") }

        var handler: FourCC = "    "
        for hdlr in [trak.descendant("mdia/hdlr"), trak.descendant("mdia/minf/hdlr")].compactMap({ $0 }) {
            let payload = try reader.payload(of: hdlr.box)
            guard payload.count >= 24 else { continue }
            if hdlr.box.path.hasSuffix("mdia/hdlr") { handler = FourCC(bytes: payload[8..<12]) }
            let name = payload[24...]
            if name.contains(where: { $0 != 0 && $0 != 0x20 }) {
                let text = String(decoding: name.first.map { Int($0) == name.count - 1 ? name.dropFirst() : name } ?? name, as: UTF8.self)
                add("mp4:handler-name", .software, hdlr.box, detail: "handler name of track \(id)",
                    value: text.trimmingCharacters(in: [" ", "\0"]), edit: .handlerName(hdlr.box))
            }
        }

        let stbl = trak.descendant("mdia/minf/stbl")
        var entries: [FourCC] = []
        var usedReferences = Set<Int>()
        var nalLength: Int?
        var hevc = false, mjpeg = false
        if let stsd = stbl?.child("stsd") {
            let payload = try reader.payload(of: stsd.box)
            var c = ByteCursor(payload, origin: stsd.box.payloadOffset, format: format, path: stsd.box.path)
            _ = try c.fullBoxHeader()
            let count = Int(try c.u32("entry count"))
            let listing = try reader.boxes(in: (stsd.box.payloadOffset + 8)..<stsd.box.end, parentPath: stsd.box.path, depth: 6)
            for entry in listing.boxes.prefix(count) {
                entries.append(entry.type)
                let start = Int(entry.offset - stsd.box.payloadOffset)
                let body = Array(payload[start + entry.headerSize..<Int(entry.end - stsd.box.payloadOffset)])
                if body.count >= 8 { usedReferences.insert(BigEndian.u16(body, 6)) }
                try scanSampleEntryBoxes(stsd: stsd.box, entry: entry, body: body[...], handler: handler, track: id)
                if ["vide", "soun"].contains(handler), body.count >= 16, body[12..<16].contains(where: { $0 != 0 }) {
                    // QuickTime sample entries name the writer's vendor ("appl", "FFMP"); ISO files keep zeros there.
                    let at = entry.payloadOffset + 12
                    add("mp4:encoder-vendor", .software, entry, detail: "encoder vendor code of track \(id)",
                        value: String(decoding: body[12..<16], as: UTF8.self), edit: .patch([(at..<at + 4, [0, 0, 0, 0])]))
                }
                if handler == "vide", body.count >= 78 {
                    // VisualSampleEntry: 8 bytes of SampleEntry, 16 pre-defined/reserved, sizes and resolutions, then a
                    // 32-byte Pascal string naming the compressor at byte 42.
                    let name = body[42..<74]
                    if name.contains(where: { $0 != 0 }) {
                        let length = min(Int(name.first ?? 0), 31)
                        let at = entry.payloadOffset + 42
                        add("mp4:compressor-name", .software, entry, detail: "compressor name of track \(id)",
                            value: String(decoding: name.dropFirst().prefix(length), as: UTF8.self),
                            edit: .patch([(at..<at + 32, Array(repeating: 0, count: 32))]))
                    }
                    if ["avc1", "avc3", "hvc1", "hev1"].contains(entry.type) {
                        hevc = entry.type == "hvc1" || entry.type == "hev1"
                        nalLength = try Self.nalLengthSize(body, entryOffset: entry.payloadOffset, hevc: hevc, reader: reader, entry: entry)
                        if hevc { try scanConfigSEI(entry: entry, track: id) }
                    }
                    if try Self.isMotionJPEG(entry, reader: reader) { mjpeg = true }
                }
            }
        }

        var selfContained = true
        if let dref = trak.descendant("mdia/minf/dinf/dref") {
            selfContained = try scanDataReferences(dref.box, used: usedReferences, track: id)
        }
        try scanTrackStructure(trak, track: id)
        let table = try SampleTable.parse(stco: stbl?.child("stco")?.box, co64: stbl?.child("co64")?.box, stsc: stbl?.child("stsc")?.box,
                                          stsz: stbl?.child("stsz")?.box, stz2: stbl?.child("stz2")?.box, reader: reader, fileSize: source.size,
                                          cutSampleData: found.options.tolerateDamage ? cutSampleData : nil)
        if let damage = table.damage, !table.sizesKnown, nalLength != nil || mjpeg {
            // Encoder SEI and a camera's JPEG segments sit in the samples, which a table without usable sizes cannot locate.
            throw damage
        }
        if let damage = table.damage {
            try found.damaged(damage, at: damage.offset ?? trak.box.offset, table.sizesKnown
                              ? "track \(id) has samples past the end of the file (\(damage.description)); the part in the file is compared"
                              : "the sample table of track \(id) does not fit the file (\(damage.description)); only its chunk positions are checked")
        }
        layout.tracks.append(MP4Track(id: id, node: trak, handler: handler, sampleEntries: entries, samples: table,
                                      chunkOffsetBox: (stbl?.child("co64") ?? stbl?.child("stco"))?.box, selfContained: selfContained,
                                      nalLengthSize: nalLength, isHEVC: hevc, isMotionJPEG: mjpeg))

        for child in trak.children {
            switch child.type {
            case "udta": try scanUserData(child)
            case "meta": try scanMeta(child)
            case "uuid": try scanUUID(child.box)
            default: break
            }
        }
    }

    /// The NAL length-field size from avcC/hvcC inside a visual sample entry.
    static func nalLengthSize(_ body: [UInt8], entryOffset: Int64, hevc: Bool, reader: BoxReader, entry: Box) throws -> Int? {
        let children = try reader.boxes(in: (entry.payloadOffset + 78)..<entry.end, parentPath: entry.path, depth: 7)
        guard let config = children.boxes.first(where: { $0.type == (hevc ? "hvcC" : "avcC") }) else { return nil }
        let payload = try reader.payload(of: config)
        let at = hevc ? 21 : 4
        guard payload.count > at else { return nil }
        return Int(payload[at] & 0x3) + 1
    }

    /// Timed-metadata, timecode, chapter and telemetry-subtitle tracks become items whose removal drops the
    /// track and its samples.
    mutating func classifyTracks(_ moov: MovieNode) throws {
        var chapterTracks = Set<UInt32>()
        for track in layout.tracks {
            for ref in track.node.child("tref")?.children ?? [] where ref.type == "chap" {
                for id in try trackIDs(ref.box) { chapterTracks.insert(id) }
            }
        }
        for track in layout.tracks {
            let entry = track.sampleEntries.first ?? "    "
            if MP4Atoms.mediaHandlers.contains(track.handler) { continue }
            if chapterTracks.contains(track.id) {
                let chapters = add("mp4:chapters", .content, track.node.box, detail: "chapter titles (track \(track.id))",
                                   edit: .dropTrack(track.id))
                // Kept with content (`location`): chapter titles are text samples, read for positions like any text.
                for sample in try textSamples(track) {
                    found.inspect(chapters, payload: sample.bytes, origin: sample.offset)
                }
            } else if let known = MP4Atoms.timedMetadata[entry] {
                add("mp4:track/\(entry)", known.category, track.node.box, detail: "\(known.name), track \(track.id)", edit: .dropTrack(track.id))
            } else if MP4Atoms.textHandlers.contains(track.handler) {
                if try looksLikeTelemetry(track) {
                    add("mp4:track/telemetry-subtitles", .location, track.node.box,
                        detail: "subtitle track \(track.id) whose text holds GPS positions", edit: .dropTrack(track.id))
                }
            } else if track.handler == "hint" {
                add("mp4:track/hint", .software, track.node.box, detail: "streaming hint track \(track.id)", edit: .dropTrack(track.id))
            } else {
                add("mp4:track/\(entry)", .content, track.node.box, detail: "\(track.handler) track \(track.id) (\(entry)) a player does not show",
                    unknown: true, edit: .dropTrack(track.id))
            }
        }
    }

    /// A text track's samples (tx3g, QuickTime text), up to a megabyte in all: chapter titles are short.
    func textSamples(_ track: MP4Track) throws -> [(offset: Int64, bytes: [UInt8])] {
        var out: [(offset: Int64, bytes: [UInt8])] = []
        var budget = Int64(ContentInspector.limit)
        for chunk in track.samples.chunks where chunk.size > 0 && budget > 0 && chunk.offset < source.size {
            let count = min(chunk.size, budget, source.size - chunk.offset)
            out.append((chunk.offset, try source.read(at: chunk.offset, count: Int(count), format: format, path: track.node.box.path)))
            budget -= count
        }
        return out
    }

    func trackIDs(_ box: Box) throws -> [UInt32] {
        let payload = try reader.payload(of: box)
        return stride(from: 0, to: payload.count - 3, by: 4).map { UInt32(BigEndian.u32(payload, $0)) }
    }

    /// Drone and dash-cam subtitle tracks carry coordinates as text: the first samples are looked at with the
    /// detector every container with text tracks shares (`LocationShapes.holdsPosition`).
    func looksLikeTelemetry(_ track: MP4Track) throws -> Bool {
        let samples = try track.samples.chunks.prefix(3).filter { $0.size > 0 }.map {
            try source.read(at: $0.offset, count: Int(min($0.size, 4096)), format: format, path: track.node.box.path)
        }
        return LocationShapes.holdsPosition(samples) != nil
    }
}
