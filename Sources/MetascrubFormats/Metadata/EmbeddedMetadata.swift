// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// An EXIF or XMP block stored whole in one container record (a HEIF item, a JPEG XL box): the items it was
/// itemised into, and what the record becomes under a plan (unchanged, gone, or rebuilt with the kept entries).
enum EmbeddedMetadata {
    /// `prefix`: the record's bytes before the TIFF header (a HEIF/JPEG XL record's 4-byte header offset and
    /// any "Exif\0\0"), kept as they are in a rebuilt record.
    case exif(prefix: [UInt8], payload: ExifPayload)
    case xmp(packet: [UInt8], keys: [Int: String])
    /// Not itemisable (unparsed, empty, compressed): one item decides for the whole record.
    case opaque(item: Int)

    enum Outcome: Equatable {
        case unchanged
        case removed
        case rebuilt([UInt8])
    }

    /// What the record becomes. `notes` receives a warning when a kept maker note had to move.
    /// EXIF orientation is never baked here: in these containers the image is turned by the container's own
    /// properties (HEIF `irot`/`imir`) or codestream header (JPEG XL), so the tag is data like any other.
    func apply(plan: CleanPlan, notes: inout [Note]) throws -> Outcome {
        switch self {
        case .opaque(let item):
            return plan.keeps(item) ? .unchanged : .removed
        case .xmp(let packet, let keys):
            guard let rebuilt = try XMPItems.rebuild(packet: packet, keys: keys, keeps: plan.keeps) else { return .removed }
            return rebuilt == packet ? .unchanged : .rebuilt(rebuilt)
        case .exif(let prefix, let payload):
            switch payload.rewrite(plan: plan, keepOrientation: nil, notes: &notes) {
            case .copy: return .unchanged
            case .drop: return .removed
            case .replace(let tiff): return .rebuilt(prefix + tiff)
            }
        }
    }

    /// Itemises an EXIF record that starts with a 4-byte big-endian offset to the TIFF header (ISO/IEC 23008-12
    /// `Exif` items, JPEG XL `Exif` boxes). `origin` is the file offset of the record's first byte.
    static func exifRecord(
        _ record: [UInt8], origin: Int64, location: String, options: ScanOptions,
        into items: inout [MetadataItem], notes: inout [Note]
    ) -> EmbeddedMetadata {
        func opaque(_ detail: String) -> EmbeddedMetadata {
            items.append(MetadataItem(key: "exif:block", category: .device, location: location, offset: origin,
                                      length: Int64(record.count), detail: detail, isUnknown: true))
            return .opaque(item: items.count - 1)
        }
        guard record.count >= 4 else { return opaque(record.isEmpty ? "empty EXIF record" : "EXIF record too short for its header offset") }
        guard let start = tiffStart(record) else {
            notes.append(Note(.warning, code: "exif-unparsed", "EXIF record has no TIFF header where it says; treated as one block", offset: origin))
            return opaque("unparsed EXIF, \(record.count) bytes")
        }
        let tiffOrigin = origin + Int64(start)
        guard let payload = ExifPayload.itemise(Array(record[start...]), origin: tiffOrigin, location: location, options: options,
                                                into: &items, notes: &notes) else {
            return .opaque(item: items.count - 1)
        }
        AppleMakerNote.itemiseContentIdentifier(payload.block, map: payload.map, location: "\(location)/EXIF", origin: tiffOrigin,
                                                into: &items, notes: &notes)
        return .exif(prefix: Array(record[..<start]), payload: payload)
    }

    /// Where the TIFF header starts: where the offset field says, or (for writers that count from elsewhere)
    /// the first TIFF byte-order mark in the next 16 bytes.
    static func tiffStart(_ record: [UInt8]) -> Int? {
        func isTIFF(_ at: Int) -> Bool {
            at >= 4 && at + 4 <= record.count
                && (record[at..<at + 4].elementsEqual([0x49, 0x49, 0x2A, 0x00]) || record[at..<at + 4].elementsEqual([0x4D, 0x4D, 0x00, 0x2A]))
        }
        let declared = 4 + BigEndian.u32(record, 0)
        if isTIFF(declared) { return declared }
        return (4..<min(record.count, 24)).first(where: isTIFF)
    }

    /// Itemises an XMP packet stored whole.
    static func xmpRecord(
        _ packet: [UInt8], origin: Int64, location: String, options: ScanOptions,
        into items: inout [MetadataItem], notes: inout [Note]
    ) -> EmbeddedMetadata {
        let keys = XMPItems.itemise(packet: packet, location: location, origin: origin, options: options, into: &items, notes: &notes)
        if keys.count == 1, let only = keys.first, only.value == "*", items[only.key].key == "xmp:packet", items[only.key].isUnknown {
            return .opaque(item: only.key)
        }
        return .xmp(packet: packet, keys: keys)
    }
}
