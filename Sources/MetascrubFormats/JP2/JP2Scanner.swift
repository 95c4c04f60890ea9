// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// The JPEG 2000 scanner's parse: the top-level boxes of a JP2/JPX file (ISO/IEC 15444-1 Annex I, 15444-2 Annex M)
/// or a bare codestream, and what decides each box's fate.
public struct JP2Layout: Sendable {
    enum Content: Sendable {
        /// One item decides for the whole box.
        case item(Int)
        /// An EXIF or XMP block rebuilt with its kept entries; `uuid` is the box's extended type.
        case metadata(EmbeddedMetadata, uuid: [UInt8])
        case iptc(datasets: [IPTC.Dataset], map: [Int: [Int]])
        /// The JP2 header box, rebuilt without its unknown children (child index → item).
        case header(children: [Box], unknown: [Int: Int])
        /// A contiguous codestream box and its comment items (comment index → item).
        case codestream(J2KCodestream, comments: [Int: Int], trailing: Int?)
    }

    /// A codestream without the JP2 wrapper: only its comments can be removed.
    var bare: Bool
    var boxes: [Box] = []
    var contents: [Int: Content] = [:]
    var trailer: Range<Int64>?
    var trailerItem: Int?

    /// Boxes that say how to decode: copied unchanged and compared by the verifier.
    static let structure: Set<FourCC> = ["jP  ", "ftyp", "rreq"]
    /// Children of `jp2h` a decoder reads (image size, colour, palette, channel mapping, resolution).
    static let headerChildren: Set<FourCC> = ["ihdr", "colr", "bpcc", "pclr", "cmap", "cdef", "res "]
    static let brands: Set<FourCC> = ["jp2 ", "jpx ", "jpxb"]
    /// JPX boxes that point at codestreams by offset or compose several of them: removing a box before them
    /// would break the image, so such files are refused rather than guessed at.
    static let compositing: Set<FourCC> = ["ftbl", "dtbl", "jpch", "jplh", "cgrp", "comp", "inst", "copt", "drep"]
}

enum JP2UUID {
    static let exif = Array("JpgTiffExif->JP2".utf8)
    static let iptc: [UInt8] = [0x33, 0xC7, 0xA4, 0xD2, 0xB8, 0x1D, 0x47, 0x23, 0xA0, 0xBA, 0xF1, 0xA3, 0xE0, 0x97,
        0xAD, 0x38]
    /// GeoJP2: a degenerate GeoTIFF whose tags place the image on the earth.
    static let geoJP2: [UInt8] = [0xB1, 0x4B, 0xF8, 0xBD, 0x08, 0x3D, 0x4B, 0x43, 0xA5, 0xAE, 0x8C, 0xD7, 0xD5, 0xA6,
        0xCE, 0x03]
}

/// Lists the metadata of a JPEG 2000 file by allow-list: the signature, `ftyp` (brand checked), the header's
/// decoding boxes and the codestream stay; XMP/IPTC/EXIF `uuid` boxes are itemised; GeoJP2, GMLJP2 (`asoc`),
/// labels, XML, IPR and every other box are items; codestream comments are items.
enum JP2Scanner {
    static let metadataLimit = 64 << 20
    static let signature: [UInt8] = [0, 0, 0, 0x0C, 0x6A, 0x50, 0x20, 0x20, 0x0D, 0x0A, 0x87, 0x0A]
    static let format = "JPEG 2000"

    static func scan(_ source: any ByteSource, options: ScanOptions) throws -> ScanResult<JP2Layout> {
        let head = try source.read(at: 0, count: Int(min(source.size, 12)), format: format, path: "signature")
        var found = ItemCollector(options)
        if head.starts(with: [0xFF, 0x4F, 0xFF, 0x51]) {
            var layout = JP2Layout(bare: true)
            let stream = try J2KCodestream.parse(source, 0..<source.size, path: "codestream")
            layout.contents[0] = codestreamItems(stream, location: "codestream", source: source, found: &found)
            return found.result(layout)
        }
        guard head == signature else {
            throw MetascrubError.malformed(format: format, path: "jP  ", offset: 0,
                reason: "no JPEG 2000 signature box")
        }
        let reader = BoxReader(source, format: format)
        let listing = try reader.topLevel()
        var layout = JP2Layout(bare: false, boxes: listing.boxes, trailer: listing.leftover)
        guard listing.boxes.count >= 2, listing.boxes[1].type == "ftyp" else {
            throw MetascrubError.malformed(format: format, path: "ftyp", offset: 12,
                reason: "the signature box is not followed by ftyp")
        }
        try checkBrands(reader.payload(of: listing.boxes[1]), offset: listing.boxes[1].offset)
        var sawHeader = false, sawCodestream = false
        for (i, box) in listing.boxes.enumerated() {
            let location = "\(box.type)@\(box.offset)"
            func add(_ key: String, _ category: Category, _ detail: String, unknown: Bool = false) -> Int {
                let item = found.add(key, category, box.range, location: location, detail: detail, unknown: unknown)
                layout.contents[i] = .item(item)
                return item
            }
            func record() throws -> [UInt8] {
                guard box.payloadSize <= Int64(metadataLimit) else {
                    throw MetascrubError.limitExceeded(format: format, path: box.path, offset: box.offset,
                        limit: "\(metadataLimit) bytes per metadata box")
                }
                return try reader.payload(of: box)
            }
            switch box.type {
            case _ where JP2Layout.structure.contains(box.type):
                continue
            case _ where JP2Layout.compositing.contains(box.type):
                throw MetascrubError.unsupported(format: "JPX",
                    reason: "\(box.type) box at \(box.offset): multi-codestream compositions are not cleaned")
            case "jp2h":
                guard !sawHeader else {
                    throw MetascrubError.malformed(format: format, path: "jp2h", offset: box.offset,
                                                   reason: "second JP2 header box")
                }
                sawHeader = true
                layout.contents[i] = try header(box, reader: reader, found: &found)
            case "jp2c":
                sawCodestream = true
                let stream = try J2KCodestream.parse(source, box.payloadRange, path: box.path)
                layout.contents[i] = codestreamItems(stream, location: location, source: source, found: &found)
            case "uuid":
                let uuid = box.extendedType ?? []
                if uuid == BoxUUID.xmp {
                    let bytes = try record()
                    let content = found.lists { items, notes in
                        EmbeddedMetadata.xmpRecord(bytes, origin: box.payloadOffset, location: location,
                            options: options, into: &items, notes: &notes)
                    }
                    layout.contents[i] = .metadata(content, uuid: uuid)
                } else if uuid == JP2UUID.exif {
                    let bytes = try record()
                    // exiftool writes the TIFF header first; other writers put "Exif\0\0" before it.
                    let start = bytes.starts(with: Array("Exif\0\0".utf8)) ? 6 : 0
                    if let payload = found.exif(Array(bytes[start...]), location: location,
                        origin: box.payloadOffset + Int64(start)) {
                        layout.contents[i] = .metadata(.exif(prefix: Array(bytes[..<start]), payload: payload),
                            uuid: uuid)
                    } else {
                        layout.contents[i] = .item(found.items.count - 1)
                    }
                } else if uuid == JP2UUID.iptc {
                    let bytes = try record()
                    let parsed = try IPTC.parse(bytes, origin: box.payloadOffset, path: box.path)
                    if parsed.restAt != nil || parsed.datasets.isEmpty {
                        _ = add("iptc:block", .content, "IPTC box that does not parse as IIM datasets", unknown: true)
                    } else {
                        let map = found.lists { items, notes in
                            IPTC.itemise(parsed.datasets, bytes: bytes, location: "\(location)/IPTC",
                                origin: box.payloadOffset,
                                         options: options, into: &items, notes: &notes)
                        }
                        layout.contents[i] = .iptc(datasets: parsed.datasets, map: map)
                    }
                } else if uuid == JP2UUID.geoJP2 {
                    _ = add("jp2:geojp2", .location, "GeoJP2 box (a GeoTIFF placing the image on the earth)")
                } else if uuid == BoxUUID.c2pa {
                    _ = add("jumbf:c2pa", .provenance, "C2PA manifest (uuid box)")
                } else {
                    _ = add("jp2:uuid", .content, "vendor box \(BoxUUID.hex(uuid))", unknown: true)
                }
            case "asoc":
                let gml = try isGML(box, reader: reader)
                _ = add(gml ? "jp2:gmljp2" : "jp2:asoc", gml ? .location : .content,
                        gml ? "GMLJP2 association (geographic coordinates in GML)" : "association box (labels and XML)",
                        unknown: !gml)
            case "xml ":
                let bytes = try record()
                if contains(bytes, "opengis.net/gml") {
                    _ = add("jp2:gmljp2", .location, "XML box holding GML (geographic coordinates)")
                } else if contains(bytes, "adobe:ns:meta") || contains(bytes, "x:xmpmeta") {
                    let content = found.lists { items, notes in
                        EmbeddedMetadata.xmpRecord(bytes, origin: box.payloadOffset, location: location,
                            options: options, into: &items, notes: &notes)
                    }
                    layout.contents[i] = .metadata(content, uuid: [])
                } else {
                    inspect(add("jp2:xml", .content, "XML box, \(box.payloadSize) bytes", unknown: true), bytes, box,
                        &found)
                }
            case "lbl ":
                inspect(add("jp2:label", .content, "label box"), try record(), box, &found)
            case "jp2i":
                _ = add("jp2:ipr", .identity, "intellectual property rights box")
            case "uinf":
                _ = add("jp2:uinf", .content, "UUID info box (a list of UUIDs and a URL)", unknown: true)
            case "jumb":
                _ = add("jumbf:box", .provenance, "JUMBF box")
            default:
                _ = add("jp2:box:\(box.type.description.trimmingWhitespace)", .content,
                    "unknown box, \(box.size) bytes", unknown: true)
            }
        }
        guard sawHeader, sawCodestream else {
            throw MetascrubError.malformed(format: format, path: sawHeader ? "jp2c" : "jp2h", offset: 0,
                reason: "no \(sawHeader ? "codestream" : "JP2 header") box")
        }
        if let trailer = listing.leftover {
            layout.trailerItem = try found.trailer("jp2:trailer", trailer, in: source, location: "after the last box",
                after: "the last box")
        }
        return found.result(layout)
    }

    static func checkBrands(_ ftyp: [UInt8], offset: Int64) throws {
        guard ftyp.count >= 8, ftyp.count % 4 == 0 else {
            throw MetascrubError.malformed(format: format, path: "ftyp", offset: offset,
                reason: "file type box of \(ftyp.count) bytes")
        }
        let compatible = stride(from: 8, to: ftyp.count, by: 4).map { FourCC(bytes: ftyp[$0..<($0 + 4)]) }
        let brands = [FourCC(bytes: ftyp[0..<4])] + compatible
        guard brands.contains(where: { JP2Layout.brands.contains($0) }) else {
            throw MetascrubError.unsupported(format: format, reason: "brand \(brands[0]) is neither JP2 nor JPX")
        }
    }

    /// The header box's children, read field by field where a decoder depends on them; any other child is an item.
    static func header(_ box: Box, reader: BoxReader, found: inout ItemCollector) throws -> JP2Layout.Content {
        let listing = try reader.children(of: box, depth: 1)
        guard listing.leftover == nil else {
            throw MetascrubError.malformed(format: format, path: box.path, offset: box.offset,
                reason: "bytes after the last header child")
        }
        guard listing.boxes.first?.type == "ihdr" else {
            throw MetascrubError.malformed(format: format, path: "jp2h/ihdr", offset: box.payloadOffset,
                reason: "the header does not start with ihdr")
        }
        var unknown: [Int: Int] = [:]
        for (c, child) in listing.boxes.enumerated() {
            if JP2Layout.headerChildren.contains(child.type) {
                try JP2HeaderFields.check(child, reader: reader)
            } else {
                unknown[c] = found.add("jp2:header:\(child.type.description.trimmingWhitespace)", .content, child.range,
                                       location: "\(box.type)@\(box.offset)/\(child.type)",
                                           detail: "unknown header box", unknown: true)
            }
        }
        return .header(children: listing.boxes, unknown: unknown)
    }

    static func codestreamItems(_ stream: J2KCodestream, location: String, source: any ByteSource,
                                found: inout ItemCollector) -> JP2Layout.Content {
        var comments: [Int: Int] = [:]
        let options = found.options
        for (c, comment) in stream.comments.enumerated() {
            let length = max(0, comment.range.count - 6)
            let text = (try? source.read(at: comment.range.lowerBound + 6, count: length)) ?? []
            let place = comment.tilePart.map { "\(location)/tile-part#\($0 + 1)/COM" } ?? "\(location)/COM#\(c + 1)"
            let item = found.add("j2k:comment", .content, comment.range, location: place,
                                 value: comment.registration == 1 ? String(decoding: text.prefix(200), as: UTF8.self)
                                     : "(binary)",
                                 detail: comment.registration == 1 ? "codestream comment" : "binary codestream comment")
            comments[c] = item
            found.lists { items, notes in
                _ = ContentInspector.inspect(text, origin: comment.range.lowerBound + 6, parent: item, options: options,
                                             items: &items, notes: &notes)
            }
        }
        let trailing = stream.trailing.map {
            found.add("j2k:trailing", .content, $0, location: "\(location) after EOC",
                detail: "bytes after the codestream's end", unknown: true)
        }
        return .codestream(stream, comments: comments, trailing: trailing)
    }

    static func isGML(_ box: Box, reader: BoxReader) throws -> Bool {
        guard box.payloadSize <= Int64(metadataLimit) else { return false }
        return contains(try reader.payload(of: box), "gml")
    }

    static func inspect(_ item: Int, _ bytes: [UInt8], _ box: Box, _ found: inout ItemCollector) {
        let options = found.options
        found.lists { items, notes in
            _ = ContentInspector.inspect(bytes, origin: box.payloadOffset, parent: item, options: options,
                items: &items, notes: &notes)
        }
    }

    static func contains(_ bytes: [UInt8], _ text: String) -> Bool {
        let needle = Array(text.utf8)
        guard bytes.count >= needle.count else { return false }
        return (0...(bytes.count - needle.count)).contains { bytes[$0..<($0 + needle.count)].elementsEqual(needle) }
    }
}
