// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubNative

/// Scans a TIFF-structured camera raw (DNG, CR2, NEF/NRW, ARW/SR2, PEF, ORF, RW2) for what can be removed in
/// place. Everything a raw converter reads stays and is not listed: image and sensor tags, DNG colour and
/// calibration tags, maker-specific IFD0 tags, Make and Model (converters identify the camera by them),
/// exposure and lens data, and the maker note itself, whose identifying fields are listed one by one.
enum RawTIFFScanner {
    /// Removable entries of image IFDs (IFD0, later IFDs, SubIFDs).
    static let imageIFDTags: Set<UInt16> = [
        0x010D, 0x010E, 0x011D, 0x0131, 0x0132, 0x013B, 0x013C, 0x8298, 0x9C9B, 0x9C9C, 0x9C9D, 0x9C9E, 0x9C9F,
        0x9003, 0x9004, 0xA420, 0xA430, 0xA431, 0xA435, 0x83BB, 0x8649,
        // DNG: serial, private maker data (a copy of the maker note), raw data ID, original file name/data/digest,
        // preview application, settings and time.
        0xC62F, 0xC634, 0xC65D, 0xC68B, 0xC68C, 0xC68D, 0xC71C, 0xC71D, 0xC71E, 0xC71F, 0xC721,
        // DNG names no decoder reads: localized camera model, lens info, profile name and copyright, the user's
        // camera label, a semantic mask's name and instance.
        0xC615, 0xC630, 0xC6F8, 0xC6FE, 0xC7A1, 0xCD2E, 0xCD30,
    ]
    /// IFD0 entries a raw converter may select its decoder and colour data by: listed, removed where LibRaw
    /// decodes the raw identically without them, otherwise kept with this reason.
    static let decoderTags: [UInt16: String] = [0x010F: "Make", 0x0110: "Model", 0xC614: "UniqueCameraModel"]
    static let decoderReason = "a raw converter selects its decoder and colour data by the camera's make and model"
    /// DNG requires UniqueCameraModel in IFD0: DNG readers look camera profiles up by it.
    static let uniqueCameraModelReason = "the DNG specification requires it (DNG readers look camera profiles up by it)"
    /// Sony's enciphered maker-note blocks are laid out by model: without it, readers take the blanked blocks for
    /// another layout and a later scan would look for the identifying fields in the wrong places.
    static let sonyModelReason = "Sony's maker-note blocks 0x2010 and 0x9050 are laid out by the model; readers (and a later clean) locate their fields by it"
    /// Removable entries of the EXIF IFD: times, serials, owner, unique ID, comment.
    static let exifIFDTags: Set<UInt16> = [
        0x9003, 0x9004, 0x9010, 0x9011, 0x9012, 0x9290, 0x9291, 0x9292, 0x9286, 0xA420, 0xA430, 0xA431, 0xA435,
        0xA432, 0xA433, 0xA434,
    ]
    static let otherNames: [UInt16: (String, Category)] = [
        0xC62F: ("CameraSerialNumber", .device), 0xC634: ("DNGPrivateData", .device), 0xC65D: ("RawDataUniqueID", .identity),
        0xC68B: ("OriginalRawFileName", .identity), 0xC68C: ("OriginalRawFileData", .embedded), 0xC68D: ("OriginalRawFileDigest", .identity),
        0xC71C: ("PreviewApplicationName", .software), 0xC71D: ("PreviewApplicationVersion", .software),
        0xC71E: ("PreviewSettingsName", .software), 0xC71F: ("PreviewSettingsDigest", .software), 0xC721: ("PreviewDateTime", .time),
        0xA430: ("CameraOwnerName", .identity), 0xA431: ("BodySerialNumber", .device), 0xA435: ("LensSerialNumber", .device),
        0xA432: ("LensSpecification", .device), 0xA433: ("LensMake", .device), 0xA434: ("LensModel", .device),
        0xC615: ("LocalizedCameraModel", .device), 0xC630: ("DNGLensInfo", .device), 0xC6F8: ("ProfileName", .device),
        0xC6FE: ("ProfileCopyright", .identity), 0xC7A1: ("CameraLabel", .identity), 0xCD2E: ("SemanticName", .device),
        0xCD30: ("SemanticInstanceID", .device),
    ]
    /// DNGPrivateData in a DNG; in a Sony ARW/SR2, SR2Private.
    static let sr2PrivateTag: UInt16 = 0xC634
    /// Panasonic RW2 keeps a full JPEG (with its own EXIF) in this IFD0 tag.
    static let jpgFromRawTag: UInt16 = 0x002E
    static let makerNoteTag: UInt16 = 0x927C
    static let exiv2Limit: Int64 = 512 << 20

    static func structure(_ source: any ByteSource) throws -> TIFFStructure {
        let head = try source.read(at: 0, count: 8, format: "raw", path: "header")
        let order = try TIFFStructure.byteOrder(head, format: "raw")
        // 42: TIFF (DNG, CR2, NEF, ARW, PEF); 0x55: Panasonic RW2; "RO"/"RS": Olympus ORF.
        guard [42, 0x55, 0x4F52, 0x5352].contains(order.u16(head, 2)) else {
            throw MetascrubError.unsupported(format: "raw", reason: "only classic-TIFF raw layouts are cleaned (version \(order.u16(head, 2)))")
        }
        return TIFFStructure(order: order, isBig: false, fileSize: source.size, firstIFD: Int64(order.u32(head, 4)))
    }

    struct Scanner {
        let source: any ByteSource
        var found: ItemCollector
        var layout: RawTIFFLayout
        var visited = Set<Int64>()
        var make = ""
        /// IFD0's Model, and its item: where Sony's enciphered fields lie depends on it (`SonyMakerNote`).
        var model = ""
        var modelItem: Int?
        var makerNotes: [(range: Range<Int64>, ifd: Int64, path: String)] = []
        /// IFD tables and entry values read (`readIFD`).
        var spans: [Range<Int64>] = []
        /// A DNG carries everything a converter needs in DNG tags, so its maker note can go whole.
        var isDNG = false
        var structure: TIFFStructure { layout.structure }
        var options: ScanOptions { found.options }

        init(source: any ByteSource, options: ScanOptions, layout: RawTIFFLayout) {
            self.source = source
            self.found = ItemCollector(options)
            self.layout = layout
        }

        mutating func run() throws {
            var offset = structure.firstIFD
            var index = 0
            while offset != 0 {
                let ifd = try readIFD(at: offset, path: "IFD\(index)")
                if index == 0 { isDNG = ifd.entry(0xC612) != nil }
                if index == 0, let entry = ifd.entry(0x010F) {
                    make = String(decoding: try structure.bytes(source, entry).prefix { $0 != 0 }, as: UTF8.self)
                }
                if index == 0, let entry = ifd.entry(0x0110) {
                    let text = try structure.bytes(source, entry).prefix { $0 != 0 }
                    model = String(decoding: text.reversed().drop { $0 == 0x20 }.reversed(), as: UTF8.self)
                }
                try image(ifd, path: "IFD\(index)")
                offset = ifd.next
                index += 1
            }
            for note in makerNotes {
                var parent: Int?
                if isDNG {
                    parent = add("exif:MakerNote", .device, location: note.path, range: note.range,
                                 detail: "maker note of a DNG, \(note.range.count) bytes",
                                 action: .drop(ifd: note.ifd, tag: RawTIFFScanner.makerNoteTag, zero: [note.range]))
                }
                try makerNote(note.range, path: note.path, parent: parent)
            }
            // LibRaw finds an IIQ's Phase One note by its magic right after the header, whether or not a MakerNote
            // entry points to it: so does this scan.
            let phaseOneAt = Int64(8)
            if !makerNotes.contains(where: { $0.range.lowerBound == phaseOneAt }), structure.fileSize > phaseOneAt + 12,
               PhaseOneMakerNote.order(try source.read(at: phaseOneAt, count: 12), main: true) != nil {
                try phaseOneMakerNote(phaseOneAt..<structure.fileSize, path: "PhaseOne", parent: nil)
            }
        }

        /// Reads one IFD and remembers what it spans (its table and every entry's value) for `itemiseTrailing`.
        mutating func readIFD(at offset: Int64, path: String) throws -> TIFFStructure.IFD {
            let ifd = try structure.readIFD(source, at: offset, path: path, visited: &visited, notes: &found.notes)
            let table = 2 + Int64(ifd.entries.count) * structure.entrySize + structure.inlineCapacity
            spans.append(ifd.offset..<ifd.offset + table)
            spans += ifd.entries.map { $0.valueOffset..<$0.valueOffset + $0.byteCount }
            return ifd
        }

        /// Adds one item and how the in-place clean removes it; returns its index.
        @discardableResult
        mutating func add(_ key: String, _ category: Category, location: String, range: Range<Int64>?, value: String? = nil,
                          detail: String? = nil, parent: Int? = nil, action: RawTIFFLayout.Action?) -> Int {
            let index = found.add(key, category, location: location, offset: range?.lowerBound, length: range.map { Int64($0.count) },
                                  value: value, detail: detail, parent: parent)
            if let action { layout.actions[index] = action }
            return index
        }

        func range(_ entry: TIFFStructure.Entry) -> Range<Int64> { entry.valueOffset..<entry.valueOffset + entry.byteCount }

        /// Out-of-line values only: an inline value goes with its entry.
        func outOfLine(_ entry: TIFFStructure.Entry) -> [Range<Int64>] {
            entry.byteCount > structure.inlineCapacity ? [range(entry)] : []
        }

        func text(_ entry: TIFFStructure.Entry) -> String? {
            guard options.includeValues, entry.byteCount <= 4096, let b = try? structure.bytes(source, entry) else { return nil }
            return ExifValue.render(ExifEntry(tag: entry.tag, type: entry.type, count: UInt32(clamping: entry.count), value: b, valueOffset: 0),
                                    order: structure.order)
        }

        mutating func image(_ ifd: TIFFStructure.IFD, path: String) throws {
            for entry in ifd.entries {
                let location = "\(path)/\(String(format4hex: entry.tag))"
                switch entry.tag {
                case TIFFScanner.exifIFDTag:
                    if let at = try structure.integers(source, entry)?.first {
                        try exifIFD(try readIFD(at: Int64(at), path: "\(path)/ExifIFD"),
                                    path: "\(path)/ExifIFD")
                    }
                case TIFFScanner.gpsIFDTag:
                    try gps(ifd, entry, path: "\(path)/GPS")
                case TIFFScanner.subIFDsTag:
                    for (k, at) in (try structure.integers(source, entry) ?? []).enumerated() {
                        try image(try readIFD(at: Int64(at), path: "\(path)/SubIFD\(k)"),
                                  path: "\(path)/SubIFD\(k)")
                    }
                case TIFFScanner.xmpTag where entry.byteCount <= TIFFScanner.parseLimit:
                    let packet = try structure.bytes(source, entry)
                    let keys = found.xmp(packet, location: "\(location)/XMP", origin: entry.valueOffset)
                    layout.xmp.append(.init(ifd: ifd.offset, tag: entry.tag, value: range(entry), packet: packet, keys: keys))
                case let tag where path == "IFD0" && RawTIFFScanner.decoderTags[tag] != nil:
                    if tag == 0xC614, isDNG {
                        let item = add("exif:UniqueCameraModel", .device, location: location, range: range(entry), value: text(entry), action: nil)
                        layout.required[item] = RawTIFFScanner.uniqueCameraModelReason
                    } else {
                        let item = add("exif:\(RawTIFFScanner.decoderTags[tag]!)", .device, location: location, range: range(entry),
                                       value: text(entry), action: .drop(ifd: ifd.offset, tag: tag, zero: outOfLine(entry)))
                        layout.decoderItems.insert(item)
                        if tag == 0x0110 { modelItem = item }
                    }
                case sr2PrivateTag where !isDNG && make.uppercased().hasPrefix("SONY"):
                    // Sony's SR2Private, not DNG private data: the enciphered black levels, white balance and matrices
                    // LibRaw reads (nothing that identifies), so it is raw data, not an item.
                    continue
                case jpgFromRawTag where path == "IFD0":
                    try embeddedJPEG(range(entry), path: "\(location)/JpgFromRaw")
                case let tag where RawTIFFScanner.imageIFDTags.contains(tag):
                    var (key, category) = name(tag, directory: .ifd0)
                    if tag == TIFFScanner.iptcTag { (key, category) = ("iptc:block", .content) }
                    if tag == TIFFScanner.photoshopTag { (key, category) = ("photoshop:resources", .content) }
                    let parent = add(key, category, location: location, range: range(entry), value: text(entry),
                                     action: .drop(ifd: ifd.offset, tag: tag, zero: outOfLine(entry)))
                    try inspectText(parent, entry)
                    if tag == 0xC634 { try dngPrivateMakerNote(range(entry), path: location, parent: parent) }
                    if tag == TIFFScanner.iptcTag || tag == TIFFScanner.photoshopTag, entry.byteCount <= TIFFScanner.parseLimit {
                        let first = found.next, block = try structure.bytes(source, entry), options = options
                        found.lists { items, notes in
                            PhotoshopItems.itemise(irbOrIPTC: block, origin: entry.valueOffset, location: location, options: options,
                                                   into: &items, notes: &notes)
                        }
                        for i in first..<found.next where found.items[i].parent == nil { found.items[i].parent = parent }
                    }
                default:
                    continue
                }
            }
            for (offsets, counts) in TIFFScanner.dataPairs {
                guard let o = ifd.entry(offsets), let c = ifd.entry(counts), let starts = try structure.integers(source, o),
                      let lengths = try structure.integers(source, c), starts.count == lengths.count else { continue }
                var outside: [UInt64] = []
                var inside: [Range<Int64>] = []
                defer { noteRawData(inside, ifd: ifd, path: path) }
                for (start, length) in zip(starts, lengths) {
                    guard start <= UInt64(structure.fileSize), length <= UInt64(structure.fileSize) - start else {
                        outside.append(start)
                        continue
                    }
                    let block = Int64(start)..<Int64(start + length)
                    layout.imageData.append(block)
                    inside.append(block)
                    try embeddedJPEG(block, path: "\(path) image data")
                }
                if let first = outside.first {
                    let what = "\(outside.count) image data block(s) of \(path), the first at offset \(first), lie beyond the end of the file; the file is cleaned in place and those blocks cannot be verified"
                    guard options.tolerateDamage else {
                        throw MetascrubError.malformed(format: "camera raw", path: "\(path) image data", offset: Int64(clamping: first), reason: what)
                    }
                    found.note(Note(.warning, code: "damaged-input", "damaged input: \(what)", offset: Int64(clamping: first)))
                    layout.truncated = true
                }
            }
        }

        /// Remembers the largest full-resolution image of a later IFD or SubIFD (IFD0 is mostly a preview) as the
        /// raw data, for the note on a raw LibRaw cannot decode.
        mutating func noteRawData(_ blocks: [Range<Int64>], ifd: TIFFStructure.IFD, path: String) {
            guard path != "IFD0", let first = blocks.first, let last = blocks.last else { return }
            let kind = ifd.entry(0x00FE).flatMap { try? structure.integers(source, $0)?.first } ?? 0
            let hull = first.lowerBound..<max(first.upperBound, last.upperBound)
            if kind == 0, hull.count > (layout.rawData?.count ?? 0) { layout.rawData = hull }
        }

        mutating func exifIFD(_ ifd: TIFFStructure.IFD, path: String) throws {
            for entry in ifd.entries {
                let location = "\(path)/\(String(format4hex: entry.tag))"
                if entry.tag == RawTIFFScanner.makerNoteTag {
                    makerNotes.append((range(entry), ifd.offset, "\(path)/MakerNote"))
                } else if RawTIFFScanner.exifIFDTags.contains(entry.tag) {
                    let (key, category) = name(entry.tag, directory: .exif)
                    let item = add(key, category, location: location, range: range(entry), value: text(entry),
                                   action: .drop(ifd: ifd.offset, tag: entry.tag, zero: outOfLine(entry)))
                    try inspectText(item, entry)
                }
            }
        }

        /// Free text (descriptions, comments, XP fields) as in any EXIF block (`ExifItems`): a position written
        /// into it is an item inside the entry, and decides it.
        mutating func inspectText(_ item: Int, _ entry: TIFFStructure.Entry) throws {
            guard found.items[item].category != .location, entry.type == 2 || ExifItems.textTags.contains(entry.tag),
                  entry.byteCount <= ContentInspector.limit else { return }
            found.inspect(item, payload: try structure.bytes(source, entry), origin: entry.valueOffset)
        }

        /// The GPS IFD goes whole: its pointer entry out, its table and values zeroed.
        mutating func gps(_ owner: TIFFStructure.IFD, _ pointer: TIFFStructure.Entry, path: String) throws {
            guard let at = try structure.integers(source, pointer)?.first else { return }
            let ifd = try readIFD(at: Int64(at), path: path)
            let table = ifd.offset..<ifd.offset + 2 + Int64(ifd.entries.count) * 12 + 4
            let parent = add("exif:GPSInfo", .location, location: path, range: table, detail: "GPS IFD, \(ifd.entries.count) entries",
                             action: .drop(ifd: owner.offset, tag: pointer.tag, zero: [table] + ifd.entries.flatMap(outOfLine)))
            for entry in ifd.entries {
                let key = ExifTagNames.name(tag: entry.tag, ifd: .gps) ?? String(format4hex: entry.tag)
                add("exif:\(key)", .location, location: "\(path)/\(String(format4hex: entry.tag))", range: range(entry), value: text(entry),
                    parent: parent, action: nil)
            }
        }

        func name(_ tag: UInt16, directory: ExifDirectory) -> (String, Category) {
            if let (name, category) = RawTIFFScanner.otherNames[tag] { return ("exif:\(name)", category) }
            let kind = ExifItems.libexifKind(directory)
            let name = ExifTagNames.name(tag: tag, ifd: kind) ?? ExifTagNames.name(tag: tag, ifd: .exif) ?? String(format4hex: tag)
            return ("exif:\(name)", ExifItems.category(tag: tag, directory: directory, name: name))
        }

        /// Metadata segments (APP1–APP15 except ICC and Adobe, COM) of a JPEG kept inside the raw (previews,
        /// thumbnails, RW2's JpgFromRaw): blanked in place, so the preview still decodes and keeps its size.
        mutating func embeddedJPEG(_ block: Range<Int64>, path: String) throws {
            try EmbeddedJPEG.itemise(source, block, path: path, into: &found, layout: &layout)
        }
    }

    static func scan(_ source: any ByteSource, options: ScanOptions) throws -> ScanResult<RawTIFFLayout> {
        var scanner = Scanner(source: source, options: options, layout: RawTIFFLayout(structure: try structure(source)))
        try scanner.run()
        try scanner.itemiseTrailing()
        return scanner.found.result(scanner.layout)
    }
}

extension RawTIFFScanner.Scanner {
    /// Hands what this scan of a TIFF inside another container (read through a window starting at `base`) found
    /// to the outer scan: offsets moved by `base`, parents and actions by the outer item count.
    func merge(into outer: inout ItemCollector, layout: inout RawTIFFLayout, at base: Int64) {
        outer.notes += found.notes
        let first = outer.next
        for var item in found.items {
            item.offset = item.offset.map { $0 + base }
            item.parent = item.parent.map { $0 + first }
            outer.items.append(item)
        }
        layout.absorb(self.layout.shifted(by: base, items: first))
    }
}
