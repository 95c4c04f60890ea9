// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// The JPEG XL scanner's parse: a bare codestream, or the boxes of the container form (ISO/IEC 18181-2).
public struct JXLLayout: Sendable {
    var bare: Bool
    var boxes: [Box] = []
    /// Box index → the metadata item standing for the whole box.
    var boxOwner: [Int: Int] = [:]
    /// Box index → itemised `Exif`/`xml ` content.
    var embedded: [Int: EmbeddedMetadata] = [:]
    var trailer: Range<Int64>?
    var trailerItem: Int?

    /// Boxes that carry the image: copied unchanged, compared by the verifier.
    static let codestream: Set<FourCC> = ["jxlc", "jxlp", "jxll", "jxli"]
    /// Container structure: copied unchanged, never listed.
    static let structure: Set<FourCC> = ["JXL ", "ftyp"]
    static let reconstruction: FourCC = "jbrd"
}

/// Lists the metadata of a JPEG XL file: `Exif` and `xml ` boxes entry by entry, `jumb` (C2PA), `brob` boxes
/// (Brotli-compressed metadata, classified by the type in their first four bytes and `unknown`: not decompressed),
/// JPEG reconstruction data, unknown boxes and bytes after the last box.
enum JXLScanner {
    static let metadataLimit = 64 << 20
    static let signature: [UInt8] = [0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A]

    static func scan(_ source: any ByteSource, options: ScanOptions) throws -> ScanResult<JXLLayout> {
        let head = try source.read(at: 0, count: Int(min(source.size, 12)), format: "JPEG XL", path: "signature")
        if head.starts(with: [0xFF, 0x0A]) {
            // A bare codestream has nowhere to put metadata beyond the image header (ICC, orientation: rendering).
            return ScanResult(layout: JXLLayout(bare: true))
        }
        guard head == signature else {
            throw MetascrubError.malformed(format: "JPEG XL", path: "JXL ", offset: 0, reason: "no JPEG XL signature box")
        }
        let reader = BoxReader(source, format: "JPEG XL")
        let listing = try reader.topLevel()
        var layout = JXLLayout(bare: false, boxes: listing.boxes, trailer: listing.leftover)
        guard listing.boxes.count >= 2, listing.boxes[1].type == "ftyp" else {
            throw MetascrubError.malformed(format: "JPEG XL", path: "ftyp", offset: 12, reason: "the signature box is not followed by ftyp")
        }
        var found = ItemCollector(options)
        for (i, box) in listing.boxes.enumerated() {
            let location = "\(box.type)@\(box.offset)"
            func add(_ key: String, _ category: Category, _ detail: String, unknown: Bool = false) {
                found.items.append(MetadataItem(key: key, category: category, location: location, offset: box.offset, length: box.size,
                                          detail: detail, isUnknown: unknown))
                layout.boxOwner[i] = found.items.count - 1
            }
            func record() throws -> [UInt8] {
                guard box.payloadSize <= Int64(metadataLimit) else {
                    throw MetascrubError.limitExceeded(format: "JPEG XL", path: box.path, offset: box.offset, limit: "\(metadataLimit) bytes per metadata box")
                }
                return try reader.payload(of: box)
            }
            switch box.type {
            case _ where JXLLayout.structure.contains(box.type) || JXLLayout.codestream.contains(box.type):
                continue
            case "Exif":
                let bytes = try record()
                layout.embedded[i] = found.lists { items, notes in
                    EmbeddedMetadata.exifRecord(bytes, origin: box.payloadOffset, location: location, options: options, into: &items, notes: &notes)
                }
            case "xml ":
                let bytes = try record()
                layout.embedded[i] = found.lists { items, notes in
                    EmbeddedMetadata.xmpRecord(bytes, origin: box.payloadOffset, location: location, options: options, into: &items, notes: &notes)
                }
            case "jumb":
                let body = try source.read(at: box.payloadOffset, count: Int(min(box.payloadSize, 256)))
                let isC2PA = body.windows(ofCount: 4).contains { $0.elementsEqual(Array("c2pa".utf8)) }
                add(isC2PA ? "jumbf:c2pa" : "jumbf:box", .provenance, isC2PA ? "C2PA manifest (JUMBF)" : "JUMBF box")
                if isC2PA { try found.c2paJUMB(box, store: found.items.count - 1, source: source) }
            case "brob":
                guard box.payloadSize >= 4 else { add("jxl:brob", .content, "empty compressed box", unknown: true); continue }
                let inner = FourCC(bytes: try source.read(at: box.payloadOffset, count: 4))
                switch inner {
                // Not decompressed: what is inside cannot be read or kept in part, so it goes under every policy.
                case "Exif":
                    add("exif:block", .device, "Brotli-compressed EXIF box, \(box.payloadSize - 4) bytes",
                        unknown: true)
                case "xml ":
                    add("xmp:packet", .content, "Brotli-compressed XMP box, \(box.payloadSize - 4) bytes",
                        unknown: true)
                case "jumb": add("jumbf:box", .provenance, "Brotli-compressed JUMBF box", unknown: true)
                default: add("jxl:brob:\(inner.description.trimmingWhitespace)", .content, "Brotli-compressed \(inner) box", unknown: true)
                }
            case JXLLayout.reconstruction:
                add("jxl:jpeg-reconstruction", .embedded,
                    "JPEG reconstruction data (rebuilds the original JPEG file, with its comment and application segments)")
            case "jhgm":
                add("jxl:gainmap", .embedded, "gain map (jhgm)")
            case "free", "skip":
                if try !HEIFScanner.isZero(source, box.payloadRange) { add("jxl:free", .content, "free space holding old data", unknown: true) }
            case "uuid":
                if box.extendedType == BoxUUID.c2pa {
                    add("jumbf:c2pa", .provenance, "C2PA manifest (uuid box)")
                    try found.c2paUUID(box, store: found.items.count - 1, source: source)
                } else {
                    add("jxl:uuid", .content, "vendor box \(BoxUUID.hex(box.extendedType ?? []))", unknown: true)
                }
            default:
                add("jxl:box:\(box.type.description.trimmingWhitespace)", .content, "unknown box, \(box.size) bytes", unknown: true)
            }
        }
        if let trailer = listing.leftover {
            layout.trailerItem = try found.trailer("jxl:trailer", trailer, in: source, location: "after the last box", after: "the last box")
        }
        return found.result(layout)
    }
}
