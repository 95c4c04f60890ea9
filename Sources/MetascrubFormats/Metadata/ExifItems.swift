// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubNative

/// Turns a parsed EXIF block into metadata items, and decides per entry what the rebuilt block keeps.
public struct ExifItems: Sendable {
    /// Item index → (directory, index of the entry in that directory); the thumbnail and the maker-note
    /// children are separate.
    public var entryOfItem: [Int: (ExifDirectory, Int)] = [:]
    public var thumbnailItem: Int?
    /// Bytes of the block no directory refers to (an unlinked GPS IFD, old values left behind): never copied.
    public var unreferencedItem: Int?
    /// The block with those bytes zeroed: what is written when every entry stays, so nothing moves (a maker note's
    /// offsets keep pointing where they did).
    public var blanked: [UInt8]?

    /// The entries' and the thumbnail's items.
    public var entries: [Int] { Array(entryOfItem.keys) + (thumbnailItem.map { [$0] } ?? []) }
    /// Item indexes whose fate decides whether the block can be copied as it is.
    public var owned: [Int] { entries + (unreferencedItem.map { [$0] } ?? []) }

    /// The block as it is written when every entry is kept: nil to copy it, or the block with its unreferenced
    /// bytes zeroed when those go.
    public func unchanged(keeps: (Int) -> Bool) -> [UInt8]? {
        guard let item = unreferencedItem, !keeps(item) else { return nil }
        return blanked
    }

    /// Technical tags a decoder or colour manager may read: structure, not personal.
    static let structural: Set<String> = [
        "XResolution", "YResolution", "ResolutionUnit", "YCbCrPositioning", "YCbCrCoefficients", "YCbCrSubSampling",
        "ExifVersion", "FlashpixVersion", "FlashPixVersion", "ColorSpace", "PixelXDimension", "PixelYDimension",
        "ComponentsConfiguration", "InteroperabilityIndex", "InteroperabilityVersion", "RelatedImageWidth",
        "RelatedImageLength", "RelatedImageHeight", "ReferenceBlackWhite", "WhitePoint", "PrimaryChromaticities",
        "TransferFunction", "Gamma", "ImageWidth", "ImageLength", "BitsPerSample", "Compression",
        "PhotometricInterpretation", "SamplesPerPixel", "PlanarConfiguration",
    ]
    static let identityTags: Set<String> = [
        "Artist", "Copyright", "CameraOwnerName", "OwnerName", "ImageUniqueID", "XPAuthor", "ImageID",
    ]
    static let contentTags: Set<String> = [
        "ImageDescription", "UserComment", "XPTitle", "XPComment", "XPKeywords", "XPSubject", "DocumentName",
        "PageName", "ImageTitle",
    ]
    static let softwareTags: Set<String> = ["Software", "ProcessingSoftware", "PrintImageMatching"]
    static let deviceTags: Set<String> = [
        "Make", "Model", "BodySerialNumber", "LensSerialNumber", "LensMake", "LensModel", "LensSpecification",
        "HostComputer", "CameraSerialNumber", "UniqueCameraModel", "LocalizedCameraModel",
    ]

    public static func category(tag: UInt16, directory: ExifDirectory, name: String) -> Category {
        if directory == .gps { return .location }
        if tag == ExifBlock.orientation { return .rendering }
        if tag == ExifBlock.makerNote { return .device }
        if structural.contains(name) || directory == .interop { return .structure }
        if identityTags.contains(name) { return .identity }
        if contentTags.contains(name) { return .content }
        if softwareTags.contains(name) { return .software }
        if deviceTags.contains(name) { return .device }
        if name.hasPrefix("DateTime") || name.hasPrefix("OffsetTime") || name.hasPrefix("SubSecTime") || name == "PreviewDateTime" {
            return .time
        }
        // Everything else in these directories describes the capture: exposure, flash, lens, scene.
        return .device
    }

    static func libexifKind(_ directory: ExifDirectory) -> ExifIFDKind {
        switch directory {
        case .ifd0: .ifd0
        case .ifd1: .ifd1
        case .exif: .exif
        case .gps: .gps
        case .interop: .interoperability
        }
    }

    /// Text entries that are not ASCII-typed: UserComment (UNDEFINED with a charset prefix) and the Windows XP
    /// fields (UTF-16 in BYTE).
    static let textTags: Set<UInt16> = [0x9286, 0x9C9B, 0x9C9C, 0x9C9D, 0x9C9E, 0x9C9F]
    /// An IPTC-IIM block TIFF writers put in an IFD entry (LONG or UNDEFINED).
    static let iptcTag: UInt16 = 0x83BB

    /// Appends the block's items to `items`. `location` names the container ("APP1#1/EXIF"), `origin` the
    /// block's file offset.
    public static func itemise(
        _ block: ExifBlock, raw: [UInt8], location: String, origin: Int64, namespace: String = "exif",
        options: ScanOptions, into items: inout [MetadataItem], notes: inout [Note]
    ) -> ExifItems {
        var map = ExifItems()
        (map.unreferencedItem, map.blanked) = unreferenced(block, raw: raw, location: location, origin: origin,
                                                           namespace: namespace, into: &items)
        for directory in [ExifDirectory.ifd0, .exif, .gps, .interop] {
            for (index, entry) in block.entries(directory).enumerated() {
                let known = ExifTagNames.name(tag: entry.tag, ifd: libexifKind(directory))
                let name = known ?? String(format4hex: entry.tag)
                var category = category(tag: entry.tag, directory: directory, name: name)
                if known == nil, directory != .gps { category = NameClassifier.category(of: name, otherwise: .device) }
                items.append(MetadataItem(
                    key: "\(namespace):\(name)", category: category,
                    location: "\(location)/\(directory.rawValue)/\(String(format4hex: entry.tag))",
                    offset: origin + Int64(entry.valueOffset), length: Int64(entry.value.count),
                    value: options.includeValues ? ExifValue.render(entry, order: block.order) : nil,
                    detail: entry.tag == ExifBlock.makerNote ? "maker note, \(entry.value.count) bytes" : nil,
                    isUnknown: known == nil))
                map.entryOfItem[items.count - 1] = (directory, index)
                // Free text (descriptions, comments, artist, XP* fields) is kept or dropped per entry: a position
                // written into it is an item inside the entry, and decides it. Byte and undefined entries are read too:
                // a writer may type any text field so (an UNDEFINED ImageDescription), and IFD0's XMP (0x02BC) is bytes.
                // An IPTC-IIM block in 0x83BB (LONG or UNDEFINED) is itemised dataset by dataset, as ExifTool reads it.
                let entryItem = items.count - 1
                if entry.tag == iptcTag, entry.value.first == 0x1C {
                    let before = items.count
                    PhotoshopItems.itemise(irbOrIPTC: entry.value, origin: origin + Int64(entry.valueOffset),
                                           location: "\(location)/\(directory.rawValue)/0x83bb", options: options,
                                           into: &items, notes: &notes)
                    for i in before..<items.count where items[i].parent == nil { items[i].parent = entryItem }
                } else if directory != .gps, category != .location, entry.tag != ExifBlock.makerNote,
                   [1, 2, 7].contains(entry.type) || textTags.contains(entry.tag) {
                    ContentInspector.inspect(entry.value, origin: origin + Int64(entry.valueOffset), parent: entryItem,
                                             options: options, items: &items, notes: &notes)
                }
                if entry.tag == ExifBlock.makerNote {
                    appendMakerNoteChildren(raw: raw, parent: items.count - 1, location: "\(location)/ExifIFD/MakerNote",
                                            origin: origin + Int64(entry.valueOffset), options: options, into: &items, notes: &notes)
                }
            }
        }
        if let thumbnail = block.thumbnail {
            items.append(MetadataItem(
                key: "\(namespace):ThumbnailImage", category: .embedded, location: "\(location)/IFD1",
                offset: origin + Int64(block.thumbnailOffset ?? 0), length: Int64(thumbnail.count),
                detail: "IFD1 thumbnail, \(thumbnail.count) bytes"))
            map.thumbnailItem = items.count - 1
        } else if !block.entries(.ifd1).isEmpty {
            // An IFD1 without thumbnail data still goes with the thumbnail item's fate.
            items.append(MetadataItem(key: "\(namespace):IFD1", category: .embedded, location: "\(location)/IFD1",
                                      detail: "second image directory"))
            map.thumbnailItem = items.count - 1
        }
        notes += block.notes
        return map
    }

    /// Maker-note entries decoded by exiv2: shown so users see the serials inside, removed with their block.
    static func appendMakerNoteChildren(
        raw: [UInt8], parent: Int, location: String, origin: Int64, options: ScanOptions,
        into items: inout [MetadataItem], notes: inout [Note]
    ) {
        // exiv2 also reports the maker note's position as Exif.MakerNote.* keys: bookkeeping, not content.
        let standardGroups: Set<String> = ["Image", "Photo", "GPSInfo", "Iop", "Thumbnail", "Image2", "Image3", "MpfInfo", "MakerNote"]
        guard let decoded = try? Exiv2.decodeExif(tiff: raw) else {
            notes.append(Note(.info, code: "makernote-undecoded", "maker note could not be decoded; it is treated as one block", offset: origin))
            return
        }
        for tag in decoded where !standardGroups.contains(tag.group) && !tag.name.hasPrefix("0x") {
            let category = NameClassifier.category(of: tag.name, otherwise: .device)
            items.append(MetadataItem(
                key: "makernote:\(tag.group).\(tag.name)", category: category, location: "\(location)/\(tag.group).\(tag.name)",
                offset: origin, length: Int64(tag.size), value: options.includeValues ? tag.value : nil, parent: parent))
        }
    }

    /// The directories to write, given which items the plan keeps. `keepOrientation` overrides the orientation
    /// entry's own item (used when baking was impossible).
    public func keptDirectories(
        of block: ExifBlock, keeps: (Int) -> Bool, keepOrientation: Bool?
    ) -> (directories: [ExifDirectory: [ExifEntry]], thumbnail: [UInt8]?) {
        var kept: [ExifDirectory: [ExifEntry]] = [:]
        for (item, (directory, index)) in entryOfItem {
            let entry = block.entries(directory)[index]
            var keep = keeps(item)
            if entry.tag == ExifBlock.orientation, directory == .ifd0, let keepOrientation { keep = keepOrientation }
            if keep { kept[directory, default: []].append(entry) }
        }
        var thumbnail: [UInt8]?
        if let t = thumbnailItem, keeps(t) {
            thumbnail = block.thumbnail
            kept[.ifd1] = block.entries(.ifd1)
        }
        return (kept, thumbnail)
    }
}

extension String {
    /// "0x010F"
    init(format4hex value: UInt16) {
        self = Self.hex4(value)
    }

    static func hex4(_ value: UInt16) -> String {
        let hex = String(value, radix: 16, uppercase: true)
        return "0x" + String(repeating: "0", count: Swift.max(0, 4 - hex.count)) + hex
    }
}

/// Short renderings of EXIF values, for `--show-values` only.
enum ExifValue {
    static func render(_ entry: ExifEntry, order: ByteOrder) -> String {
        let v = entry.value
        switch entry.type {
        case 2:
            let text = String(decoding: v.prefix(while: { $0 != 0 }), as: UTF8.self)
            return String(text.prefix(200))
        case 3 where v.count >= 2:
            return (0..<min(8, v.count / 2)).map { String(order.u16(v, $0 * 2)) }.joined(separator: " ")
        case 4 where v.count >= 4:
            return (0..<min(8, v.count / 4)).map { String(order.u32(v, $0 * 4)) }.joined(separator: " ")
        case 5 where v.count >= 8, 10 where v.count >= 8:
            return (0..<min(8, v.count / 8)).map { "\(order.u32(v, $0 * 8))/\(order.u32(v, $0 * 8 + 4))" }.joined(separator: " ")
        default:
            let ascii = v.prefix(64).allSatisfy { $0 >= 0x20 && $0 < 0x7F || $0 == 0 }
            if ascii, v.count > 0 { return String(decoding: v.prefix(while: { $0 != 0 }).prefix(200), as: UTF8.self) }
            return "(\(v.count) bytes)"
        }
    }
}
