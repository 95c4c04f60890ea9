// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// Looks inside an item a container keeps or drops whole (an iXML chunk, a `bext` coding history, an ID3
/// comment or private frame, a Vorbis comment, a PNG text chunk, a Matroska tag or attachment) and itemises
/// what it holds, as children of that item: a position stated in its text becomes a `location` item, an XMP
/// packet, EXIF/TIFF block or Photoshop resource block inside it is itemised by the shared readers, and an
/// image inside it is scanned by its own format handler. The container cannot remove just the inner part, so
/// the policy's usual rule does the rest: a block is removed when any item inside it is (`Policy.evaluate`),
/// and scan, clean, the re-scan and the report all see the same children.
enum ContentInspector {
    /// Nested images are scanned at most this deep (an image in a tag of an image in a tag).
    static let maxDepth = 2
    @TaskLocal static var depth = 0
    /// Bytes looked at per item: text metadata is small; a larger blob is looked at in its first part only.
    static let limit = 1 << 20

    /// Adds the items `payload` holds (the bytes of item `parent`, found at `origin` in the file) and returns
    /// their indexes.
    @discardableResult
    static func inspect(_ payload: [UInt8], origin: Int64, parent: Int, options: ScanOptions,
                        items: inout [MetadataItem], notes: inout [Note]) -> [Int] {
        guard items.indices.contains(parent), !payload.isEmpty else { return [] }
        let bytes = Array(payload.prefix(limit))
        let first = items.count
        let location = items[parent].location
        var claimed: [Range<Int>] = []
        for block in embedded(in: bytes) {
            let part = Array(bytes[block.range])
            let at = origin + Int64(block.range.lowerBound)
            let before = items.count
            switch block.kind {
            case .xmp:
                _ = XMPItems.itemise(packet: part, location: "\(location) > XMP", origin: at, options: options, into: &items, notes: &notes)
            case .exif:
                _ = ExifPayload.itemise(part, origin: at, location: location, options: options, into: &items, notes: &notes)
            case .irb:
                PhotoshopItems.itemise(irbOrIPTC: part, origin: at, location: "\(location) > Photoshop", options: options, into: &items, notes: &notes)
                if items.count == before {
                    items.append(MetadataItem(key: "inspect:embedded:photoshop-irb", category: .content, location: "\(location) > Photoshop",
                                              offset: at, length: Int64(part.count), detail: "Photoshop image resources inside \(items[parent].key)"))
                }
            case .image(let name):
                // An item that already is an embedded file (a thumbnail atom, a cover frame) is cleaned or removed
                // as one by the policy's `embedded` rule; an image hidden in anything else is itemised here.
                guard items[parent].category != .embedded else {
                    claimed.append(block.range)
                    continue
                }
                image(name, part, origin: at, in: parent, options: options, items: &items, notes: &notes)
            }
            for i in before..<items.count where items[i].parent == nil { items[i].parent = parent }
            claimed.append(block.range)
        }
        for (match, range) in locations(in: bytes) {
            guard !claimed.contains(where: { $0.overlaps(range) }) else { continue }
            let name = match.name.map { ":" + $0 } ?? ""
            let key = "inspect:location:\(match.kind.rawValue)\(match.kind == .element ? name : "")"
            guard !items[first...].contains(where: { $0.key == key }) else { continue }
            items.append(MetadataItem(
                key: key, category: .location, location: "\(location) > \(match.kind == .element ? match.name ?? "location" : "location")",
                offset: origin + Int64(range.lowerBound), length: Int64(range.count),
                value: options.includeValues ? ValueText.render(bytes[range.clamped(to: 0..<bytes.count)]) : nil,
                detail: "\(match.kind.what) inside \(items[parent].key)", parent: parent))
        }
        return Array(first..<items.count)
    }

    /// The location shapes in the payload and, for UTF-16 text in any script (ID3, ASF, RIFF Unicode strings, EXIF
    /// XPComment and UNICODE UserComment), in its narrowed form: each with the range mapped back to payload positions.
    static func locations(in bytes: [UInt8]) -> [(LocationShapes.Match, Range<Int>)] {
        var out = LocationShapes.find(in: bytes).map { ($0, $0.range) }
        guard UTF16Text.mayHold(bytes) else { return out }
        for phase in 0..<2 {
            for bigEndian in [false, true] {
                out += LocationShapes.find(in: UTF16Text.narrowed(bytes, phase: phase, bigEndian: bigEndian)).map { match in
                    (match, phase + 2 * match.range.lowerBound..<min(bytes.count, phase + 2 * match.range.upperBound))
                }
            }
        }
        return out
    }

    enum Kind: Equatable { case xmp, exif, irb, image(String) }

    /// Metadata blocks and files inside the payload: XMP packets, `Exif\0\0` + TIFF (or a TIFF header at the
    /// very start), `8BIM` resource blocks, and JPEG, PNG and HEIF/AVIF files.
    static func embedded(in b: [UInt8]) -> [(kind: Kind, range: Range<Int>)] {
        var out: [(kind: Kind, range: Range<Int>)] = []
        var i = 0
        while i + 8 <= b.count {
            if let block = block(at: i, b) {
                out.append(block)
                i = max(block.range.upperBound, i + 1)
            } else {
                i += 1
            }
        }
        return out
    }

    private static func block(at i: Int, _ b: [UInt8]) -> (kind: Kind, range: Range<Int>)? {
        if b[i] == 0x3C, starts(b, i, "<?xpacket begin") || starts(b, i, "<x:xmpmeta") {
            let end = find(b, "<?xpacket end", from: i).flatMap { e in find(b, "?>", from: e).map { $0 + 2 } }
                ?? find(b, "</x:xmpmeta>", from: i).map { $0 + 12 } ?? b.count
            return (.xmp, i..<end)
        }
        if b[i] == 0x45, starts(b, i, "Exif"), b[i + 4] == 0, b[i + 5] == 0, isTIFF(b, i + 6) { return (.exif, i..<b.count) }
        if i == 0, isTIFF(b, 0) { return (.exif, 0..<b.count) }
        // A resource block is recognised at the start only: "8BIM" inside other binary data is too common.
        if i == 0, starts(b, 0, "8BIM"), b[4] == 0x03 || b[4] == 0x04 { return (.irb, 0..<b.count) }
        if b[i] == 0xFF, b[i + 1] == 0xD8, b[i + 2] == 0xFF, b[i + 3] >= 0xC0, b[i + 3] != 0xFF { return (.image("jpeg"), i..<b.count) }
        if b[i] == 0x89, b[(i + 1)..<(i + 8)].elementsEqual([0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return (.image("png"), i..<b.count) }
        if b[i] == 0x66, i >= 4, i + 8 <= b.count, starts(b, i, "ftyp"),
           ["heic", "heix", "mif1", "msf1", "avif", "hevc", "heim", "heis"].contains(String(decoding: b[(i + 4)..<(i + 8)], as: UTF8.self)) {
            return (.image("heif"), (i - 4)..<b.count)
        }
        return nil
    }

    /// An image inside the payload: one `embedded` item, with the items its own handler finds as children.
    private static func image(_ name: String, _ part: [UInt8], origin: Int64, in parent: Int, options: ScanOptions,
                              items: inout [MetadataItem], notes: inout [Note]) {
        let location = "\(items[parent].location) > \(name.uppercased())"
        let holder = items.count
        items.append(MetadataItem(key: "inspect:embedded:\(name)", category: .embedded, location: location, offset: origin,
                                  length: Int64(part.count), detail: "\(name.uppercased()) image inside \(items[parent].key), \(part.count) bytes",
                                  parent: parent))
        guard depth < maxDepth, let entry = FormatRegistry.detect(Array(part.prefix(64))), let handler = entry.handler else { return }
        let scan: FormatScan
        do {
            scan = try $depth.withValue(depth + 1) { try handler.scan(MemoryByteSource(part), options: options) }
        } catch {
            notes.append(Note(.warning, code: "embedded-unwalked", "an image inside \(items[parent].key) could not be scanned; it is treated as embedded content", offset: origin))
            return
        }
        let base = items.count
        for var item in scan.items {
            item.offset = item.offset.map { $0 + origin }
            item.location = "\(location) > \(item.location)"
            item.parent = item.parent.map { $0 + base } ?? holder
            items.append(item)
        }
    }

    private static func isTIFF(_ b: [UInt8], _ i: Int) -> Bool {
        guard i + 8 <= b.count else { return false }
        let little = b[i] == 0x49 && b[i + 1] == 0x49 && b[i + 2] == 0x2A && b[i + 3] == 0
        let big = b[i] == 0x4D && b[i + 1] == 0x4D && b[i + 2] == 0 && b[i + 3] == 0x2A
        guard little || big else { return false }
        let ifd = little ? Int(b[i + 4]) | Int(b[i + 5]) << 8 | Int(b[i + 6]) << 16 | Int(b[i + 7]) << 24
            : Int(b[i + 7]) | Int(b[i + 6]) << 8 | Int(b[i + 5]) << 16 | Int(b[i + 4]) << 24
        return ifd >= 8 && i + ifd < b.count
    }

    private static func starts(_ b: [UInt8], _ i: Int, _ s: String) -> Bool {
        let u = Array(s.utf8)
        return i + u.count <= b.count && b[i..<i + u.count].elementsEqual(u)
    }

    /// The first offset at or after `from` where `b` holds `s`'s UTF-8 bytes.
    static func find(_ b: [UInt8], _ s: String, from: Int) -> Int? {
        let u = Array(s.utf8)
        guard let f = u.first, b.count >= u.count else { return nil }
        var i = from
        while i + u.count <= b.count {
            if b[i] == f, b[i..<i + u.count].elementsEqual(u) { return i }
            i += 1
        }
        return nil
    }
}

extension ItemCollector {
    /// Itemises what the kept-whole item `parent` holds (`ContentInspector`); returns the new items' indexes.
    @discardableResult
    mutating func inspect(_ parent: Int, payload: [UInt8], origin: Int64) -> [Int] {
        let options = self.options
        return lists { items, notes in
            ContentInspector.inspect(payload, origin: origin, parent: parent, options: options, items: &items, notes: &notes)
        }
    }
}
