// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// An EXIF block stored whole in one container unit (a PNG eXIf chunk, a WebP EXIF chunk, an ImageMagick
/// raw profile): parsed, itemised, and rewritten with only the kept entries.
struct ExifPayload {
    static let header: [UInt8] = Array("Exif\0\0".utf8)

    var block: ExifBlock
    var map: ExifItems
    /// The item of IFD0's Orientation entry, when there is one.
    var orientationItem: Int?
    /// The "Exif\0\0" header when the original had one: a rebuilt WebP EXIF chunk keeps the form the original
    /// used, because some viewers read the orientation only from that form.
    var header: [UInt8] = []

    var orientation: Int? { block.orientationValue }

    /// Itemises `bytes` (a TIFF structure, optionally after "Exif\0\0", which some writers add). When the block
    /// does not parse, one unknown `exif:block` item stands for it (with a note) and nil is returned.
    static func itemise(
        _ bytes: [UInt8], origin: Int64, location: String, options: ScanOptions,
        into items: inout [MetadataItem], notes: inout [Note]
    ) -> ExifPayload? {
        let skip = bytes.starts(with: header) ? header.count : 0
        let tiff = Array(bytes.dropFirst(skip))
        let tiffOrigin = origin + Int64(skip)
        do {
            let block = try ExifParser.parse(tiff, origin: tiffOrigin, path: "\(location)/EXIF")
            let map = ExifItems.itemise(block, raw: tiff, location: "\(location)/EXIF", origin: tiffOrigin,
                                        options: options, into: &items, notes: &notes)
            let orientationItem = map.entryOfItem.first { item, entry in
                entry.0 == .ifd0 && block.entries(.ifd0)[entry.1].tag == ExifBlock.orientation
            }?.key
            return ExifPayload(block: block, map: map, orientationItem: orientationItem, header: Array(bytes.prefix(skip)))
        } catch {
            let offset = (error as? MetascrubError)?.offset
            notes.append(Note(.warning, code: "exif-unparsed", "EXIF block could not be parsed; treated as one block", offset: offset ?? origin))
            items.append(MetadataItem(key: "exif:block", category: .device, location: "\(location)/EXIF", offset: origin,
                                      length: Int64(bytes.count), detail: "unparsed EXIF, \(bytes.count) bytes", isUnknown: true))
            return nil
        }
    }

    enum Rewrite: Equatable {
        case copy
        case drop
        /// A rebuilt TIFF structure (without the "Exif\0\0" header).
        case replace([UInt8])
    }

    /// What the cleaned container holds instead of this block. `keepOrientation` overrides the orientation
    /// entry's own disposition: false once it is baked into the pixels, true when it is kept as a fallback.
    func rewrite(plan: CleanPlan, keepOrientation: Bool?, notes: inout [Note]) -> Rewrite {
        let owned = map.owned
        if owned.isEmpty { return .drop }
        if map.entries.allSatisfy(plan.keeps), keepOrientation == nil || block.orientationValue == nil {
            return map.unchanged(keeps: plan.keeps).map { .replace($0) } ?? .copy
        }
        let kept = map.keptDirectories(of: block, keeps: plan.keeps, keepOrientation: keepOrientation)
        guard let built = ExifWriter(order: block.order, directories: kept.directories, thumbnail: kept.thumbnail).build() else {
            return .drop
        }
        if !built.makerNoteInPlace {
            notes.append(Note(.warning, code: "makernote-moved", "the kept maker note had to move; its internal offsets may no longer resolve"))
        }
        return .replace(built.bytes)
    }
}
