// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubNative

/// What the TIFF scanner learned: every IFD (image pages, thumbnails, EXIF/GPS/Interop and SubIFDs) as a node,
/// and for every entry what decides whether it is written again.
public struct TIFFLayout: Sendable {
    enum Role: Equatable {
        /// A full-resolution image in the main chain (IFD0, later pages): always kept.
        case page
        /// A reduced-resolution image in the main chain (thumbnail, preview): kept with its item.
        case reduced
        /// An image in a SubIFDs array: kept with its item.
        case subIFD
        case exif, gps, interop

        var holdsImage: Bool { self == .page || self == .reduced || self == .subIFD }
        var exifDirectory: ExifDirectory {
            switch self {
            case .exif: .exif
            case .gps: .gps
            case .interop: .interop
            default: .ifd0
            }
        }
    }

    enum Fate {
        /// A tag the decoder needs: copied.
        case structural
        /// Strip/tile/JPEG offsets: rewritten to where the data lands.
        case data([Range<Int64>])
        case item(Int)
        /// IFD0's Orientation: kept, baked or dropped as the cleaner decides.
        case orientation(Int)
        case xmp(packet: [UInt8], keys: [Int: String])
        case iptc(datasets: [IPTC.Dataset], map: [Int: [Int]])
        /// Offsets of sub-IFDs (ExifIFD, GPS, Interop, SubIFDs): the nodes they point to.
        case pointer([Int])
        /// Never written (free-space lists).
        case drop
    }

    struct Node {
        var ifd: TIFFStructure.IFD
        var role: Role
        var path: String
        /// Reduced images and SubIFDs stand or fall whole with this item.
        var atomicItem: Int?
        /// One per entry of `ifd`.
        var fates: [Fate] = []
    }

    var structure: TIFFStructure
    var nodes: [Node] = []
    /// The main IFD chain, in file order.
    var chain: [Int] = []
    var orientation: Int?
    var orientationItem: Int?
}

/// Lists every metadata item of a TIFF: IFD0 and page tags by their EXIF names (`exif:Make`), the ExifIFD,
/// GPS and Interop entries, XMP (700), IPTC (33723), Photoshop resources (34377), ICC (34675), GeoTIFF tags,
/// and thumbnails or previews in further IFDs and SubIFDs.
enum TIFFScanner {
    /// Tags a decoder needs to reconstruct the image; never items.
    static let structuralTags: Set<UInt16> = [
        254, 255, 256, 257, 258, 259, 262, 263, 264, 265, 266, 273, 277, 278, 279, 280, 281, 282, 283, 284, 286, 287, 290, 291,
        292, 293, 296, 297, 301, 317, 318, 319, 320, 321, 322, 323, 324, 325, 326, 327, 328, 332, 333, 334, 336, 338, 339, 340,
        341, 342, 343, 344, 345, 346, 347, 512, 513, 514, 515, 517, 518, 529, 530, 531, 532, 32995, 32996, 32997, 32998,
    ]
    /// (offsets tag, byte counts tag) pairs whose data is copied and whose offsets are rewritten.
    static let dataPairs: [(UInt16, UInt16)] = [(273, 279), (324, 325), (513, 514)]
    static let freeSpaceTags: Set<UInt16> = [288, 289]
    static let orientationTag: UInt16 = 274
    static let exifIFDTag: UInt16 = 34665
    static let gpsIFDTag: UInt16 = 34853
    static let interopIFDTag: UInt16 = 40965
    static let subIFDsTag: UInt16 = 330
    static let xmpTag: UInt16 = 700
    static let iptcTag: UInt16 = 33723
    static let photoshopTag: UInt16 = 34377
    static let iccTag: UInt16 = 34675
    static let dngVersionTag: UInt16 = 0xC612
    /// Tags libexif does not name, with a key and category of their own.
    static let otherTags: [UInt16: (String, Category)] = [
        37724: ("tiff:ImageSourceData", .embedded), 33550: ("tiff:ModelPixelScale", .location),
        33922: ("tiff:ModelTiepoint", .location), 34264: ("tiff:ModelTransformation", .location),
        34735: ("tiff:GeoKeyDirectory", .location), 34736: ("tiff:GeoDoubleParams", .location),
        34737: ("tiff:GeoAsciiParams", .location), 42112: ("tiff:GDALMetadata", .content), 42113: ("tiff:GDALNoData", .content),
        50838: ("tiff:ImageJMetaDataByteCounts", .content), 50839: ("tiff:ImageJMetaData", .content),
    ]
    static let rawReason = "camera raw files need their maker notes decoded to be cleaned safely; convert first"
    /// The format named when a TIFF turns out to be a camera raw (TIFFFormat hands those to RawTIFFFormat).
    static let rawFormat = "camera raw (TIFF-based)"
    /// Metadata values larger than this are not parsed (one opaque item instead).
    static let parseLimit: Int64 = 64 << 20

    struct Scanner {
        let source: any ByteSource
        var found: ItemCollector
        var layout: TIFFLayout
        var visited = Set<Int64>()

        var structure: TIFFStructure { layout.structure }

        mutating func run() throws {
            var offset = structure.firstIFD
            var index = 0
            while offset != 0 {
                let path = "IFD\(index)"
                let ifd = try structure.readIFD(source, at: offset, path: path, visited: &visited, notes: &found.notes)
                if index == 0, ifd.entry(TIFFScanner.dngVersionTag) != nil {
                    throw MetascrubError.unsupported(format: "DNG", reason: TIFFScanner.rawReason)
                }
                let subfile = try structure.integer(source, ifd, 254) ?? 0
                let oldSubfile = try structure.integer(source, ifd, 255) ?? 1
                let reduced = index > 0 && (subfile & 1 == 1 || oldSubfile == 2)
                var atomic: Int?
                if reduced {
                    found.items.append(MetadataItem(key: "tiff:\(path)", category: .embedded, location: path, offset: ifd.offset,
                                              detail: "reduced-resolution image (thumbnail or preview) in \(path)"))
                    atomic = found.items.count - 1
                }
                let node = try addImageNode(ifd, role: reduced ? .reduced : .page, path: path, atomicItem: atomic, isFirst: index == 0)
                layout.chain.append(node)
                offset = ifd.next
                index += 1
            }
        }

        mutating func addNode(_ ifd: TIFFStructure.IFD, role: TIFFLayout.Role, path: String, atomicItem: Int?) -> Int {
            layout.nodes.append(TIFFLayout.Node(ifd: ifd, role: role, path: path, atomicItem: atomicItem))
            return layout.nodes.count - 1
        }

        mutating func addImageNode(_ ifd: TIFFStructure.IFD, role: TIFFLayout.Role, path: String, atomicItem: Int?, isFirst: Bool) throws -> Int {
            if let photometric = try structure.integer(source, ifd, 262), photometric == 32803 || photometric == 34892 {
                throw MetascrubError.unsupported(format: TIFFScanner.rawFormat, reason: TIFFScanner.rawReason)
            }
            if try structure.integer(source, ifd, 259) == 6, ifd.entries.contains(where: { (519...521).contains($0.tag) }) {
                throw MetascrubError.unsupported(format: "TIFF", reason: "old-style JPEG compression (6) with separate tables is not supported")
            }
            let node = addNode(ifd, role: role, path: path, atomicItem: atomicItem)
            let dataRanges = try dataBlocks(ifd, path: path)
            var fates: [TIFFLayout.Fate] = []
            let first = found.items.count
            for entry in ifd.entries {
                let location = "\(path)/\(String(format4hex: entry.tag))"
                if let ranges = dataRanges[entry.tag] {
                    fates.append(.data(ranges))
                } else if TIFFScanner.freeSpaceTags.contains(entry.tag) {
                    fates.append(.drop)
                } else if entry.tag == TIFFScanner.orientationTag && isFirst {
                    let value = try structure.integers(source, entry)?.first.map(Int.init)
                    layout.orientation = value
                    add("exif:Orientation", .rendering, entry, location: location, value: value.map(String.init))
                    layout.orientationItem = found.items.count - 1
                    fates.append(.orientation(found.items.count - 1))
                } else if TIFFScanner.structuralTags.contains(entry.tag) || entry.tag == TIFFScanner.orientationTag {
                    fates.append(.structural)
                } else {
                    fates.append(try metadataFate(entry, path: path, location: location))
                }
            }
            if let atomicItem {
                for i in first..<found.items.count where found.items[i].parent == nil { found.items[i].parent = atomicItem }
            }
            layout.nodes[node].fates = fates
            return node
        }

        /// Strip, tile and JPEG-interchange ranges of an image IFD, by offsets tag; each checked against the file.
        func dataBlocks(_ ifd: TIFFStructure.IFD, path: String) throws -> [UInt16: [Range<Int64>]] {
            var result: [UInt16: [Range<Int64>]] = [:]
            for (offsetsTag, countsTag) in TIFFScanner.dataPairs {
                guard let offsetsEntry = ifd.entry(offsetsTag) else { continue }
                guard let countsEntry = ifd.entry(countsTag), let offsets = try structure.integers(source, offsetsEntry),
                      let counts = try structure.integers(source, countsEntry), offsets.count == counts.count else {
                    throw MetascrubError.malformed(format: structure.format, path: "\(path)/\(String(format4hex: offsetsTag))",
                                                   offset: offsetsEntry.valueOffset, reason: "image data offsets without matching byte counts")
                }
                result[offsetsTag] = try zip(offsets, counts).map { offset, count in
                    guard offset <= UInt64(structure.fileSize), count <= UInt64(structure.fileSize),
                          Int64(offset) + Int64(count) <= structure.fileSize else {
                        throw MetascrubError.truncated(format: structure.format, path: "\(path) image data", offset: Int64(clamping: offset),
                                                       // Saturating: a crafted offset and count near 2^64 must not trap.
                                                       needed: Int64(clamping: offset.addingReportingOverflow(count).overflow ? UInt64.max : offset + count) - structure.fileSize)
                    }
                    return Int64(offset)..<Int64(offset) + Int64(count)
                }
            }
            return result
        }

        mutating func add(_ key: String, _ category: Category, _ entry: TIFFStructure.Entry, location: String, value: String? = nil,
                          detail: String? = nil, unknown: Bool = false) {
            found.add(key, category, location: location, offset: entry.valueOffset, length: entry.byteCount, value: value, detail: detail,
                      unknown: unknown)
        }

        /// The fate of a non-structural entry of an image IFD.
        mutating func metadataFate(_ entry: TIFFStructure.Entry, path: String, location: String) throws -> TIFFLayout.Fate {
            let tooLarge = entry.byteCount > TIFFScanner.parseLimit
            switch entry.tag {
            case TIFFScanner.exifIFDTag, TIFFScanner.gpsIFDTag:
                let role: TIFFLayout.Role = entry.tag == TIFFScanner.exifIFDTag ? .exif : .gps
                return pointer(to: try structure.integers(source, entry) ?? [], role: role,
                               path: "\(path)/\(role == .exif ? "ExifIFD" : "GPS")", entry: entry)
            case TIFFScanner.subIFDsTag:
                var children: [Int] = []
                for (k, offset) in (try structure.integers(source, entry) ?? []).enumerated() {
                    let subPath = "\(path)/SubIFD\(k)"
                    let ifd = try structure.readIFD(source, at: Int64(offset), path: subPath, visited: &visited, notes: &found.notes)
                    found.items.append(MetadataItem(key: "tiff:SubIFD", category: .embedded, location: subPath, offset: ifd.offset,
                                              detail: "image in SubIFD \(k) (preview or alternative rendition)"))
                    children.append(try addImageNode(ifd, role: .subIFD, path: subPath, atomicItem: found.items.count - 1, isFirst: false))
                }
                return .pointer(children)
            case TIFFScanner.xmpTag where !tooLarge:
                let packet = try structure.bytes(source, entry)
                let keys = found.xmp(packet, location: "\(location)/XMP", origin: entry.valueOffset)
                return .xmp(packet: packet, keys: keys)
            case TIFFScanner.iptcTag where !tooLarge:
                let data = try structure.bytes(source, entry)
                if let parsed = try? IPTC.parse(data, origin: entry.valueOffset, path: "\(location)/IPTC"), parsed.restAt == nil {
                    let options = found.options
                    let map = found.lists { items, notes in
                        IPTC.itemise(parsed.datasets, bytes: data, location: "\(location)/IPTC", origin: entry.valueOffset,
                                     options: options, into: &items, notes: &notes)
                    }
                    return .iptc(datasets: parsed.datasets, map: map)
                }
                add("iptc:block", .content, entry, location: location, detail: "IPTC-IIM block that does not parse", unknown: true)
                return .item(found.items.count - 1)
            case TIFFScanner.photoshopTag where !tooLarge:
                add("photoshop:resources", .content, entry, location: location, detail: "Photoshop image resources, \(entry.byteCount) bytes")
                let parent = found.items.count - 1
                let first = found.items.count
                let irb = try structure.bytes(source, entry), options = found.options
                found.lists { items, notes in
                    PhotoshopItems.itemise(irbOrIPTC: irb, origin: entry.valueOffset, location: location, options: options, into: &items, notes: &notes)
                }
                for i in first..<found.items.count where found.items[i].parent == nil { found.items[i].parent = parent }
                return .item(parent)
            case TIFFScanner.iccTag:
                add("icc:profile", .rendering, entry, location: location, detail: "ICC profile, \(entry.byteCount) bytes")
                return .item(found.items.count - 1)
            default:
                if let (key, category) = TIFFScanner.otherTags[entry.tag] {
                    add(key, category, entry, location: location)
                } else if let name = ExifTagNames.name(tag: entry.tag, ifd: .ifd0) {
                    add("exif:\(name)", ExifItems.category(tag: entry.tag, directory: .ifd0, name: name), entry, location: location,
                        value: try renderedValue(entry))
                } else {
                    add("tiff:\(String(format4hex: entry.tag))", .content, entry, location: location,
                        detail: "unknown tag, \(entry.byteCount) bytes", unknown: true)
                }
                return .item(found.items.count - 1)
            }
        }

        /// A pointer to an EXIF, GPS or Interop IFD. One that cannot be read is dropped with a note (it is
        /// metadata, not image data).
        mutating func pointer(to offsets: [UInt64], role: TIFFLayout.Role, path: String, entry: TIFFStructure.Entry) -> TIFFLayout.Fate {
            guard let offset = offsets.first else { return .drop }
            do {
                let ifd = try structure.readIFD(source, at: Int64(offset), path: path, visited: &visited, notes: &found.notes)
                let node = addNode(ifd, role: role, path: path, atomicItem: nil)
                var fates: [TIFFLayout.Fate] = []
                for sub in ifd.entries {
                    if role == .exif, sub.tag == TIFFScanner.interopIFDTag {
                        fates.append(pointer(to: (try? structure.integers(source, sub)) ?? [], role: .interop, path: "\(path)/Interop", entry: sub))
                        continue
                    }
                    let directory = role.exifDirectory
                    let known = ExifTagNames.name(tag: sub.tag, ifd: ExifItems.libexifKind(directory))
                    let name = known ?? String(format4hex: sub.tag)
                    var category = ExifItems.category(tag: sub.tag, directory: directory, name: name)
                    if known == nil, directory != .gps { category = NameClassifier.category(of: name, otherwise: .device) }
                    add("exif:\(name)", category, sub, location: "\(path)/\(String(format4hex: sub.tag))",
                        value: (try? renderedValue(sub)) ?? nil,
                        detail: sub.tag == ExifBlock.makerNote ? "maker note, \(sub.byteCount) bytes" : nil, unknown: known == nil)
                    fates.append(.item(found.items.count - 1))
                }
                layout.nodes[node].fates = fates
                return .pointer([node])
            } catch {
                found.notes.append(Note(.warning, code: "tiff-subifd-unreadable", "\(path) cannot be read and is dropped (\((error as? MetascrubError)?.code ?? "error"))",
                                  offset: entry.valueOffset))
                return .drop
            }
        }

        func renderedValue(_ entry: TIFFStructure.Entry) throws -> String? {
            guard found.options.includeValues, entry.byteCount <= 4096 else { return nil }
            let value = try structure.bytes(source, entry)
            return ExifValue.render(ExifEntry(tag: entry.tag, type: entry.type, count: UInt32(clamping: entry.count), value: value, valueOffset: 0),
                                    order: structure.order)
        }
    }

    static func scan(_ source: any ByteSource, options: ScanOptions) throws -> ScanResult<TIFFLayout> {
        var scanner = Scanner(source: source, found: ItemCollector(options), layout: TIFFLayout(structure: try TIFFStructure.header(source)))
        try scanner.run()
        try scanner.itemiseUnreferenced()
        return scanner.found.result(scanner.layout)
    }
}
