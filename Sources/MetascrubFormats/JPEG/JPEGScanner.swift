// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubNative

/// What the JPEG scanner learned about each metadata segment, kept for the cleaner.
public struct JPEGLayout: Sendable {
    enum SegmentContent {
        case none
        case exif(ExifBlock, ExifItems)
        case xmp(packet: [UInt8], keys: [Int: String])
        case photoshop(PhotoshopIRB, iptc: (datasets: [IPTC.Dataset], map: [Int: [Int]])?, resourceItems: [Int: Int])
        case jfif(thumbnailItem: Int?, slackItem: Int?)
        case adobe(slackItem: Int?)
    }

    var structure: JPEGStructure
    /// Items whose fate decides each segment's fate (copy when all are kept, drop when none are).
    var segmentItems: [Int: [Int]] = [:]
    var contents: [Int: SegmentContent] = [:]
    /// Ranges after EOI and the item that stands for each.
    var trailerParts: [(range: Range<Int64>, item: Int)] = []
    var mpfItem: Int?
    var orientation: Int?
    var orientationItem: Int?
    /// The ICC profile's text tags and, per APP2 segment, the profile bytes it carries.
    var iccText: (edit: ICCTextEdit, chunks: [Int: Range<Int>])?
}

/// Lists every metadata item of a JPEG: each APPn/COM segment by kind, the entries inside EXIF, XMP,
/// IPTC and Photoshop blocks, and every byte after EOI.
enum JPEGScanner {
    static func scan(_ source: any ByteSource, options: ScanOptions, hint: EntropyHint? = nil) throws -> ScanResult<JPEGLayout> {
        let structure = try JPEGStructure.parse(source, hint: hint)
        var layout = JPEGLayout(structure: structure)
        var found = ItemCollector(options)
        var iccSegments: [Int] = []
        var jumbfSegments: [Int: [Int]] = [:]
        var extensionSegments: [String: [Int]] = [:]
        var mpfIndex: (segment: Int, entries: [(offset: Int64, length: Int64)])?
        var appCount: [UInt8: Int] = [:]

        for (index, segment) in structure.segments.enumerated() {
            guard segment.role != .structural, segment.role != .scan else { continue }
            appCount[segment.marker, default: 0] += 1
            let location = "\(segment.name)#\(appCount[segment.marker]!)"
            let first = found.items.count
            func add(_ key: String, _ category: Category, detail: String? = nil, unknown: Bool = false) {
                found.items.append(MetadataItem(key: key, category: category, location: location, offset: segment.offset,
                                          length: Int64(segment.length), detail: detail, isUnknown: unknown))
            }
            switch segment.role {
            case .jfif:
                let payload = try source.read(at: segment.payloadOffset, count: segment.payloadLength)
                var thumbnailItem: Int?
                if payload.count >= 14, Int(payload[12]) * Int(payload[13]) > 0 {
                    add("jfif:thumbnail", .embedded, detail: "JFIF thumbnail \(payload[12])×\(payload[13])")
                    thumbnailItem = found.items.count - 1
                }
                let fields = payload.count >= 14
                    ? JPEGStructure.jfifFields + 3 * Int(payload[12]) * Int(payload[13]) : payload.count
                let slack = slackItem(&found, segment, fieldsEnd: fields, what: "JFIF", location: location)
                layout.contents[index] = .jfif(thumbnailItem: thumbnailItem, slackItem: slack)
            case .jfxx:
                add("jfif:JFXX", .embedded, detail: "JFIF extension thumbnail")
            case .exif:
                let payload = try source.read(at: segment.payloadOffset, count: segment.payloadLength)
                let tiff = Array(payload.dropFirst(6))
                let origin = segment.payloadOffset + 6
                do {
                    let block = try ExifParser.parse(tiff, origin: origin, path: "\(location)/EXIF")
                    let map = found.lists { items, notes in
                        ExifItems.itemise(block, raw: tiff, location: "\(location)/EXIF", origin: origin, options: options, into: &items, notes: &notes)
                    }
                    layout.contents[index] = .exif(block, map)
                    if layout.orientation == nil, let value = block.orientationValue {
                        layout.orientation = value
                        layout.orientationItem = map.entryOfItem.first { block.entries($0.value.0)[$0.value.1].tag == ExifBlock.orientation && $0.value.0 == .ifd0 }?.key
                    }
                } catch let error as MetascrubError {
                    found.notes.append(Note(.warning, code: "exif-unparsed", "EXIF block could not be parsed (\(error.description)); treated as one block",
                                      offset: error.offset))
                    add("exif:block", .device, detail: "unparsed EXIF, \(segment.payloadLength) bytes", unknown: true)
                }
            case .xmp:
                let payload = try source.read(at: segment.payloadOffset, count: segment.payloadLength)
                let packet = Array(payload.dropFirst(JPEGStructure.xmpHeader.count))
                let keys = found.xmp(packet, location: "\(location)/XMP", origin: segment.payloadOffset)
                layout.contents[index] = .xmp(packet: packet, keys: keys)
            case .xmpExtension:
                let head = try source.read(at: segment.payloadOffset, count: min(segment.payloadLength, JPEGStructure.xmpExtensionHeader.count + 32))
                let guid = String(decoding: head.dropFirst(JPEGStructure.xmpExtensionHeader.count), as: UTF8.self)
                extensionSegments[guid, default: []].append(index)
                continue
            case .icc:
                iccSegments.append(index)
                continue
            case .mpf:
                let payload = try source.read(at: segment.payloadOffset, count: segment.payloadLength)
                add("mpf:index", .embedded, detail: "multi-picture index")
                mpfIndex = (index, MPF.entries(payload, headerOffset: segment.payloadOffset + 4))
                layout.mpfItem = found.items.count - 1
            case .photoshop:
                let payload = try source.read(at: segment.payloadOffset, count: segment.payloadLength)
                let irbBytes = Array(payload.dropFirst(JPEGStructure.photoshopHeader.count))
                let irbOrigin = segment.payloadOffset + Int64(JPEGStructure.photoshopHeader.count)
                let irb = PhotoshopIRB.parse(irbBytes)
                var iptc: (datasets: [IPTC.Dataset], map: [Int: [Int]])?
                var resourceItems: [Int: Int] = [:]
                for (r, resource) in irb.resources.enumerated() {
                    if resource.id == PhotoshopIRB.iptcID {
                        let data = Array(resource.raw[(resource.dataRange.lowerBound - resource.offset)..<(resource.dataRange.upperBound - resource.offset)])
                        let parsed = try IPTC.parse(data, origin: irbOrigin + Int64(resource.dataRange.lowerBound), path: "\(location)/IPTC")
                        let map = found.lists { items, notes in
                            IPTC.itemise(parsed.datasets, bytes: data, location: "\(location)/IPTC",
                                         origin: irbOrigin + Int64(resource.dataRange.lowerBound), options: options,
                                         into: &items, notes: &notes)
                        }
                        var datasetsOfItem = map
                        if let rest = parsed.restAt {
                            // Bytes after the last dataset are no dataset anyone reads: an unknown item, so a clean
                            // that keeps every dataset still rebuilds the block without them.
                            let at = irbOrigin + Int64(resource.dataRange.lowerBound + rest)
                            found.notes.append(Note(.warning, code: "iptc-trailing", "IPTC block has bytes after its last dataset; they are dropped",
                                                    offset: at))
                            found.items.append(MetadataItem(key: "iptc:unparsed", category: .content, location: "\(location)/IPTC",
                                                            offset: at, length: Int64(data.count - rest),
                                                            detail: "bytes after the last IPTC dataset", isUnknown: true))
                            datasetsOfItem[found.items.count - 1] = []
                        }
                        iptc = (parsed.datasets, datasetsOfItem)
                        continue
                    }
                    if resource.id == PhotoshopIRB.iptcDigestID { continue } // follows the IPTC block
                    let (name, category, known) = PhotoshopIRB.name(resource.id)
                    found.items.append(MetadataItem(key: "photoshop:\(name)", category: category, location: "\(location)/8BIM/\(String(format4hex: resource.id))",
                                              offset: irbOrigin + Int64(resource.offset), length: Int64(resource.raw.count), isUnknown: !known))
                    resourceItems[found.items.count - 1] = r
                    // A resource is kept or dropped whole; what it holds (XMP in 0x0424, EXIF in 0x0422, a URL in
                    // 0x040B) is read first, so a position inside decides it.
                    let data = Array(resource.raw[(resource.dataRange.lowerBound - resource.offset)..<(resource.dataRange.upperBound - resource.offset)])
                    found.inspect(found.items.count - 1, payload: data, origin: irbOrigin + Int64(resource.dataRange.lowerBound))
                }
                if irb.restAt != nil {
                    add("photoshop:unparsed", .content, detail: "bytes after the last image resource", unknown: true)
                }
                layout.contents[index] = .photoshop(irb, iptc: iptc, resourceItems: resourceItems)
            case .adobe:
                add("jpeg:Adobe", .rendering, detail: "Adobe APP14 colour transform")
                let slack = slackItem(&found, segment, fieldsEnd: JPEGStructure.adobeFields, what: "Adobe APP14", location: location)
                layout.contents[index] = .adobe(slackItem: slack)
            case .comment:
                let text = options.includeValues ? try source.read(at: segment.payloadOffset, count: min(segment.payloadLength, 200)) : []
                found.items.append(MetadataItem(key: "jpeg:comment", category: .content, location: location, offset: segment.offset,
                                          length: Int64(segment.length), value: options.includeValues ? String(decoding: text, as: UTF8.self) : nil))
                // Kept or dropped whole: a position or a metadata block written into the comment decides it.
                found.inspect(found.items.count - 1, payload: try source.read(at: segment.payloadOffset, count: segment.payloadLength),
                              origin: segment.payloadOffset)
            case .jumbf:
                // A JUMBF box spans APP11 segments sharing a box instance number: one item, read once all are seen.
                let head = try source.read(at: segment.payloadOffset, count: min(segment.payloadLength, 4))
                jumbfSegments[head.count == 4 ? Int(BigEndian.u16(head, 2)) : -1, default: []].append(index)
                continue
            case .otherApp(let ident):
                let category: Category = ident.hasPrefix("FLIR") ? .device : NameClassifier.category(of: ident, otherwise: .content)
                let label = ident.isEmpty ? segment.name : "\(segment.name):\(ident.prefix { $0 != " " })"
                add("jpeg:\(label)", category, detail: "vendor segment \(segment.name)\(ident.isEmpty ? "" : " \"\(ident)\"")", unknown: true)
            case .unknownMarker:
                add("jpeg:\(segment.name)", .content, detail: "marker segment \(segment.name) no decoder needs, \(segment.length) bytes",
                    unknown: true)
            case .structural, .scan:
                continue
            }
            layout.segmentItems[index] = Array(first..<found.items.count)
        }

        // An ICC profile spans one or more APP2 segments; it is one item.
        if !iccSegments.isEmpty {
            let total = iccSegments.reduce(0) { $0 + structure.segments[$1].payloadLength - 14 }
            let first = structure.segments[iccSegments[0]]
            found.items.append(MetadataItem(key: "icc:profile", category: .rendering, location: "APP2/ICC_PROFILE", offset: first.offset,
                                      length: Int64(total), detail: "ICC profile, \(total) bytes in \(iccSegments.count) segment\(iccSegments.count == 1 ? "" : "s")"))
            let profileItem = found.items.count - 1
            for s in iccSegments { layout.segmentItems[s] = [profileItem] }
            try readICCText(iccSegments, structure, source, profileItem, into: &found, layout: &layout)
        }
        for (_, segments) in jumbfSegments.sorted(by: { $0.key < $1.key }) {
            try JPEGJUMBF.itemise(segments, structure, source, into: &found, layout: &layout)
        }
        // Extended XMP: one block per GUID, usually depth maps or images in base64.
        for (guid, segments) in extensionSegments.sorted(by: { $0.key < $1.key }) {
            let total = segments.reduce(0) { $0 + structure.segments[$1].payloadLength }
            found.items.append(MetadataItem(key: "xmp:ExtendedXMP", category: .embedded, location: "APP1/xmp-extension/\(guid.prefix(8))",
                                      offset: structure.segments[segments[0]].offset, length: Int64(total),
                                      detail: "extended XMP in \(segments.count) segment\(segments.count == 1 ? "" : "s")"))
            for s in segments { layout.segmentItems[s] = [found.items.count - 1] }
        }
        // After EOI: MPF secondary images first, then whatever else is there.
        if let trailer = structure.trailer {
            var covered: [Range<Int64>] = []
            if let mpf = mpfIndex, let mpfItem = layout.mpfItem {
                for (n, entry) in mpf.entries.enumerated() where entry.offset >= trailer.lowerBound && entry.offset + entry.length <= trailer.upperBound {
                    let range = entry.offset..<(entry.offset + entry.length)
                    found.items.append(MetadataItem(key: "mpf:MPImage\(n + 2)", category: .embedded, location: "trailer/MPF image \(n + 2)",
                                              offset: entry.offset, length: entry.length, detail: "secondary image (\(entry.length) bytes)", parent: mpfItem))
                    layout.trailerParts.append((range, found.items.count - 1))
                    covered.append(range)
                }
            }
            for gap in Trailer.gaps(in: trailer, excluding: covered) {
                found.items.append(try Trailer.item(key: "jpeg:trailer", range: gap, in: source, location: "after EOI", after: "EOI"))
                layout.trailerParts.append((gap, found.items.count - 1))
                // An image appended after this one (a second JPEG) is looked into by its own handler.
                try found.embeddedFile(in: source, gap, item: found.items.count - 1)
            }
        }
        return found.result(layout)
    }
}

extension JPEGScanner {
    /// Bytes of a segment after the last field a reader understands (`fieldsEnd` bytes into its payload): an
    /// `unknown` item, so a clean that keeps the segment writes it without them.
    static func slackItem(_ found: inout ItemCollector, _ segment: JPEGStructure.Segment, fieldsEnd: Int, what: String,
                          location: String) -> Int? {
        guard segment.payloadLength > fieldsEnd else { return nil }
        let count = segment.payloadLength - fieldsEnd
        found.items.append(MetadataItem(key: "jpeg:\(segment.name)-slack", category: .content,
                                        location: "\(location)/slack",
                                        offset: segment.payloadOffset + Int64(fieldsEnd), length: Int64(count),
                                        detail: "\(count) bytes after the \(what) fields", isUnknown: true))
        return found.items.count - 1
    }
}

/// Bytes after the end of an image.
enum Trailer {
    static func gaps(in whole: Range<Int64>, excluding parts: [Range<Int64>]) -> [Range<Int64>] {
        var result: [Range<Int64>] = []
        var at = whole.lowerBound
        for part in parts.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if part.lowerBound > at { result.append(at..<part.lowerBound) }
            at = max(at, part.upperBound)
        }
        if at < whole.upperBound { result.append(at..<whole.upperBound) }
        return result
    }

    static func describe(head: [UInt8], tail: [UInt8], length: Int64) -> String {
        func has(_ text: String, in bytes: [UInt8]) -> Bool { bytes.windows(ofCount: text.utf8.count).contains { $0.elementsEqual(Array(text.utf8)) } }
        if has("ftyp", in: head) { return "MP4/MOV video (motion photo), \(length) bytes" }
        if has("SEFT", in: tail) { return "Samsung SEFT trailer, \(length) bytes" }
        if head.starts(with: [0xFF, 0xD8]) { return "another JPEG image, \(length) bytes" }
        if head.allSatisfy({ $0 == 0 }) { return "zero padding, \(length) bytes" }
        return "\(length) unidentified bytes"
    }
}

extension Array where Element == UInt8 {
    func windows(ofCount n: Int) -> [ArraySlice<UInt8>] {
        guard n > 0, count >= n else { return [] }
        return (0...(count - n)).map { self[$0..<$0 + n] }
    }
}

/// The CIPA DC-007 Multi-Picture Format index in APP2: where the secondary images are.
enum MPF {
    /// Entries of the MP index after the first (the primary image), as absolute file ranges.
    /// `headerOffset` is the file offset of the MPF TIFF header (offsets in entries are relative to it).
    static func entries(_ payload: [UInt8], headerOffset: Int64) -> [(offset: Int64, length: Int64)] {
        let tiff = Array(payload.dropFirst(4))
        guard tiff.count >= 8 else { return [] }
        let order: ByteOrder = tiff[0] == 0x4D ? .big : .little
        let ifd = Int(order.u32(tiff, 4))
        guard ifd + 2 <= tiff.count else { return [] }
        let count = Int(order.u16(tiff, ifd))
        guard count < 256, ifd + 2 + count * 12 <= tiff.count else { return [] }
        for i in 0..<count {
            let e = ifd + 2 + i * 12
            guard order.u16(tiff, e) == 0xB002 else { continue }
            let n = Int(order.u32(tiff, e + 4))
            let at = Int(order.u32(tiff, e + 8))
            guard n % 16 == 0, n <= 16 * 64, at + n <= tiff.count else { return [] }
            return stride(from: at, to: at + n, by: 16).dropFirst().compactMap { entry in
                let size = Int64(order.u32(tiff, entry + 4))
                let offset = Int64(order.u32(tiff, entry + 8))
                return offset > 0 && size > 0 ? (headerOffset + offset, size) : nil
            }
        }
        return []
    }
}
