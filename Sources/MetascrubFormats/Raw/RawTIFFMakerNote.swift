// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubNative

extension RawTIFFScanner.Scanner {
    /// Identifying fields of a maker note, located entry by entry and named by exiv2 (or by the table of
    /// notes exiv2 does not decode). A named identifying field that cannot be located refuses the file.
    /// `parent`: the whole maker note's item, when it can go whole (its fields are then only removed with it
    /// when the policy keeps the note).
    mutating func makerNote(_ note: Range<Int64>, path: String, parent: Int? = nil) throws {
        if PhaseOneMakerNote.order(try source.read(at: note.lowerBound, count: Int(min(Int64(note.count), 12))), main: true) != nil {
            return try phaseOneMakerNote(note, path: path, parent: parent)
        }
        guard let ifd = try MakerNoteIFD.locate(source, note: note, make: make, order: structure.order) else {
            found.note(Note(.warning, code: "makernote-unknown", "maker note of an unlisted layout; it is kept as it is", offset: note.lowerBound))
            return
        }
        // `plain`: the deciphered bytes of a byte field, as exiv2 reads them (see the array case below).
        var named: [(number: Int, size: Int, name: String, plain: [UInt8]?)] = []
        if let table = MakerNoteFields.undecoded[ifd.vendor] {
            // Sorted: the tables are dictionaries, and a report lists items in the same order on every run.
            named = table.sorted { $0.key < $1.key }.map { (Int($0.key), -1, "\(ifd.vendor).\($0.value)", nil) }
        } else {
            let standard: Set<String> = ["Image", "Photo", "GPSInfo", "Iop", "Thumbnail", "Image2", "Image3", "SubImage1", "SubImage2",
                                         "SubImage3", "SubImage4", "SubImage5", "SubThumb1", "MpfInfo", "MakerNote"]
            for tag in try exiv2Tags() where !standard.contains(tag.group) && !tag.name.hasPrefix("0x") && MakerNoteFields.isIdentifying(tag.name) {
                // Only Nikon's cipher is an XOR keystream (`plain` is used to cancel it).
                let bytes = tag.typeName == "Byte" && tag.group.hasPrefix("Nikon")
                    ? tag.value.split(separator: " ").compactMap { UInt8($0) } : []
                named.append((tag.number, tag.size, "\(tag.group).\(tag.name)", bytes.count == tag.size ? bytes : nil))
            }
            named += (MakerNoteFields.unnamed[ifd.vendor] ?? [:]).sorted { $0.key < $1.key }.map { (Int($0.key), -1, "\(ifd.vendor).\($0.value)", nil) }
            if ifd.vendor == "Sony" {
                // Sony's enciphered 0x2010 and 0x9050 fields by ExifTool's tables (exiv2 misses or missizes them).
                named.removeAll { $0.name.hasPrefix("Sony2010e.") }
                let lengths = Dictionary(ifd.entries.map { ($0.tag, Int64($0.value.count)) }) { a, _ in a }
                if let modelItem, lengths[SonyMakerNote.tag2010] != nil || lengths[SonyMakerNote.tag9050] != nil {
                    layout.required[modelItem] = RawTIFFScanner.sonyModelReason
                }
                var fields = SonyMakerNote.fields(model: model, lengths: lengths)
                if let shotInfo = ifd.entries.first(where: { $0.tag == SonyMakerNote.shotInfoTag }), shotInfo.value.count <= 4096 {
                    named.removeAll { $0.name.hasPrefix("SonySInfo1.") }
                    fields += SonyMakerNote.shotInfoFields(try source.read(at: shotInfo.value.lowerBound, count: Int(shotInfo.value.count)))
                }
                named += fields.filter { MakerNoteFields.isIdentifying($0.name) }
                    .map { ($0.offset, $0.size, "\(SonyMakerNote.group($0.tag)).\($0.name)", nil) }
            }
        }
        // Where the enciphered blocks can be re-enciphered, the key entries are cleared outright; otherwise they
        // get key-equivalent values (`NikonKey`).
        var recipher = ifd.vendor == "Nikon" ? try NikonRecipher.locate(source, entries: ifd.entries, model: model) : nil
        var unlocated: [String] = []
        for field in named {
            let group = String(field.name.prefix { $0 != "." })
            let where_: Range<Int64>
            var action: RawTIFFLayout.Action
            if let entry = ifd.entries.first(where: { Int($0.tag) == field.number && (field.size < 0 || Int64(field.size) == Int64($0.value.count)) }) {
                // A whole entry leaves the maker-note IFD (readers then show nothing, not a zero); the other
                // entries' values stay where they are.
                where_ = entry.value
                action = .drop(ifd: ifd.offset, tag: entry.tag, zero: entry.value.count > 4 ? [entry.value] : [], order: ifd.order)
            } else if let (parent, unit) = MakerNoteFields.array(group), let array = ifd.entries.first(where: { $0.tag == parent }),
                      field.size > 0, Int64(field.number) * unit + Int64(field.size) <= Int64(array.value.count) {
                // An element of a binary array (exiv2 numbers them by their index in units of the element type).
                let at = array.value.lowerBound + Int64(field.number) * unit
                where_ = at..<at + Int64(field.size)
                action = .blank(where_)
                if let plain = field.plain {
                    // Nikon enciphers its lens and shot data (`NikonCipher`): the stored bytes XOR the deciphered
                    // ones are the keystream, so writing that deciphers to zeros (for plain data it is zeros
                    // itself); a new key re-enciphers the block over it afterwards (`NikonRecipher`).
                    let stored = try source.read(at: at, count: field.size)
                    guard plain.contains(where: { $0 != 0 }) else { continue }
                    action = .overwrite(where_, zip(stored, plain).map { $0 ^ $1 })
                }
            } else if let sub = try ifd.subIFD(group, source: source, note: note),
                      let entry = sub.entries.first(where: { Int($0.tag) == field.number && Int64(field.size) == Int64($0.value.count) }) {
                // An entry of a sub-IFD (Olympus' Equipment...) leaves that IFD, as a top-level entry leaves the note's.
                where_ = entry.value
                action = .drop(ifd: sub.offset, tag: entry.tag, zero: entry.value.count > 4 ? [entry.value] : [], order: sub.order)
            } else {
                if field.size >= 0 { unlocated.append(field.name) }
                continue
            }
            let value = try source.read(at: where_.lowerBound, count: Int(where_.count))
            // A zero that leaves its IFD with its entry still says something (FacesDetected 0); a zero blanked in
            // place is already what a clean leaves, and listing it would make the clean no fixed point.
            let isZero = !value.contains(where: { $0 != 0 }) && field.plain?.contains(where: { $0 != 0 }) != true
            var leavesWhole = false
            if case .drop = action, ifd.vendor != "Nikon" { leavesWhole = true }
            guard !isZero || leavesWhole else { continue }
            if ifd.vendor == "Nikon", case .drop = action {
                // Nikon notes keep their entries (LibRaw deciphers white balance when it meets the shutter
                // count): values are blanked, the key fields cleared (their blocks re-enciphered) or, where a
                // block's enciphering is not known, given key-equivalent values.
                let tag = UInt16(field.number)
                let replacement = recipher != nil ? NikonRecipher.cleared(tag: tag, length: value.count)
                    : NikonKey.replacement(tag: tag, value: value, order: ifd.order)
                if let replacement {
                    guard replacement != value else { continue }
                    action = .overwrite(where_, replacement)
                } else {
                    action = .blank(where_)
                }
            }
            let item = add("makernote:\(field.name)", MakerNoteFields.category(field.name), location: "\(path)/\(field.name)", range: where_,
                           value: options.includeValues ? ValueText.render(value[...]) : nil, parent: parent, action: action)
            if let parent { layout.partOf[item] = parent }
            switch UInt16(exactly: field.number) {
            case NikonKey.serialTag?: recipher?.serialItem = item
            case NikonKey.shutterCountTag?: recipher?.countItem = item
            default: break
            }
        }
        if let recipher, recipher.serialItem != nil || recipher.countItem != nil { layout.nikon.append(recipher) }
        if ifd.vendor == "Canon" {
            try canonMakerNoteFields(ifd.entries, ifd: ifd.offset, order: ifd.order, path: path, named: false, parent: parent)
        }
        if !unlocated.isEmpty, parent != nil {
            found.note(Note(.warning, code: "makernote-unlocated",
                              "identifying maker-note fields cannot be located for blanking in place (\(Set(unlocated).sorted().joined(separator: ", "))); they go only with the whole maker note",
                              offset: note.lowerBound))
        } else if !unlocated.isEmpty {
            throw MetascrubError.unsupported(format: "camera raw", reason:
                "identifying maker-note fields inside a sub-structure cannot be located for blanking in place: \(Set(unlocated).sorted().joined(separator: ", "))")
        }
    }

    /// exiv2's decoding of the whole file (the header made a plain TIFF one for RW2 and ORF), for names.
    func exiv2Tags() throws -> [DecodedTag] {
        guard structure.fileSize <= RawTIFFScanner.exiv2Limit else {
            throw MetascrubError.limitExceeded(format: "camera raw", path: "maker note", offset: 0, limit: "512 MiB for maker-note decoding")
        }
        var bytes = try source.read(at: 0, count: Int(structure.fileSize))
        bytes.replaceSubrange(2..<4, with: structure.order.bytes(UInt16(42)))
        return (try? Exiv2.decodeExif(tiff: bytes)) ?? []
    }
}
