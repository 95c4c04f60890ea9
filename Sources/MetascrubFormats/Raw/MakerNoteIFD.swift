// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// The top-level IFD of a maker note, located the way each maker writes it (the header before the IFD and
/// the base its offsets count from), so each entry's value can be blanked where it lies. Maker notes whose
/// layout is not listed here are not walked.
struct MakerNoteIFD {
    struct Entry {
        var tag: UInt16
        var type: UInt16
        /// File offset and length of the value (inside the entry when it fits there).
        var value: Range<Int64>
    }

    var vendor: String
    /// Where the IFD starts, and its byte order (a maker note may use another than the file's).
    var offset: Int64
    var order: ByteOrder
    /// What value offsets count from.
    var base: Int64
    var entries: [Entry]

    /// `note`: the maker note's file range; `make`: IFD0's Make; `order`: the file's byte order.
    static func locate(_ source: any ByteSource, note: Range<Int64>, make: String, order: ByteOrder) throws -> MakerNoteIFD? {
        let head = try source.read(at: note.lowerBound, count: Int(min(Int64(note.count), 32)))
        func starts(_ text: String) -> Bool { head.starts(with: Array(text.utf8)) }
        func orderAt(_ at: Int) -> ByteOrder? {
            guard head.count >= at + 2 else { return nil }
            if head[at] == 0x49, head[at + 1] == 0x49 { return .little }
            if head[at] == 0x4D, head[at + 1] == 0x4D { return .big }
            return nil
        }
        let at = note.lowerBound
        // (vendor, IFD offset in the file, base that value offsets count from, byte order)
        let layout: (String, Int64, Int64, ByteOrder)?
        if starts("Nikon\0"), head.count >= 18, let o = orderAt(10) {
            layout = ("Nikon", at + 10 + Int64(o.u32(head, 14)), at + 10, o)
        } else if starts("Apple iOS\0"), let o = orderAt(12) {
            layout = ("Apple", at + 14, at, o)
        } else if starts("Panasonic\0") {
            layout = ("Panasonic", at + 12, 0, order)
        } else if starts("OLYMPUS\0") || starts("OM SYSTEM\0"), let o = orderAt(starts("OLYMPUS\0") ? 8 : 12) {
            layout = ("Olympus", at + (starts("OLYMPUS\0") ? 12 : 16), at, o)
        } else if starts("OLYMP\0") || starts("CAMER\0") || starts("EPSON\0") {
            layout = ("Olympus", at + 8, 0, order)
        } else if starts("SONY DSC \0") || starts("SONY CAM \0") || starts("SONY MOBILE\0") {
            layout = ("Sony", at + 12, 0, order)
        } else if starts("AOC\0"), let o = orderAt(4) {
            layout = ("Pentax", at + 6, 0, o)
        } else if starts("PENTAX \0"), let o = orderAt(8) {
            layout = ("Pentax", at + 10, at, o)
        } else if starts("FUJIFILM"), head.count >= 12 {
            layout = ("Fujifilm", at + Int64(ByteOrder.little.u32(head, 8)), at, .little)
        } else if make.hasPrefix("Canon") {
            layout = ("Canon", at, 0, order)
        } else if make.uppercased().hasPrefix("SONY") || make.uppercased().hasPrefix("NIKON") {
            // Older Sony and Nikon notes: a bare IFD, offsets from the TIFF header.
            layout = (make.uppercased().hasPrefix("SONY") ? "Sony" : "Nikon", at, 0, order)
        } else {
            layout = nil
        }
        guard let (vendor, ifdAt, base, o) = layout else { return nil }
        return MakerNoteIFD(vendor: vendor, offset: ifdAt, order: o, base: base,
                            entries: try entries(source, at: ifdAt, base: base, order: o, note: note))
    }

    /// The sub-IFD that holds exiv2's `group` (Olympus' Equipment, CameraSettings... directories), nil when the group
    /// is not one or the note has no such entry. The entry points to it (type IFD or LONG, an offset from the note's
    /// base) or holds it (older notes: the IFD inside the value); its offsets count from the same base.
    func subIFD(_ group: String, source: any ByteSource, note: Range<Int64>) throws -> MakerNoteIFD? {
        guard let tag = MakerNoteFields.subIFDs[group], let entry = entries.first(where: { $0.tag == tag }) else { return nil }
        let at: Int64
        switch entry.type {
        case 4, 13:
            guard entry.value.count == 4 else { return nil }
            at = base + Int64(order.u32(try source.read(at: entry.value.lowerBound, count: 4), 0))
        case 7:
            at = entry.value.lowerBound
        default:
            return nil
        }
        return MakerNoteIFD(vendor: vendor, offset: at, order: order, base: base,
                            entries: try Self.entries(source, at: at, base: base, order: order, note: note))
    }

    static func entries(_ source: any ByteSource, at offset: Int64, base: Int64, order: ByteOrder, note: Range<Int64>) throws -> [Entry] {
        let fail = { (reason: String) in MetascrubError.malformed(format: "maker note", path: "MakerNote", offset: offset, reason: reason) }
        guard offset >= note.lowerBound, offset + 2 <= note.upperBound else { throw fail("the maker-note IFD lies outside the maker note") }
        let count = Int(order.u16(try source.read(at: offset, count: 2), 0))
        guard count > 0, count <= 1024, offset + 2 + Int64(count) * 12 <= note.upperBound else { throw fail("implausible maker-note IFD") }
        let table = try source.read(at: offset + 2, count: count * 12)
        var result: [Entry] = []
        for i in 0..<count {
            let e = i * 12
            let tag = order.u16(table, e), type = order.u16(table, e + 2)
            guard let unit = TIFFStructure.typeSize(type) else { continue }
            let n = Int64(order.u32(table, e + 4))
            guard n <= source.size else { throw fail("maker-note entry larger than the file") }
            let length = n * unit
            let at = length <= 4 ? offset + 2 + Int64(e) + 8 : base + Int64(order.u32(table, e + 8))
            // An entry pointing outside the file cannot be blanked; it is skipped (and refused below if named).
            guard at >= 0, at + length <= source.size else { continue }
            result.append(Entry(tag: tag, type: type, value: at..<at + length))
        }
        return result
    }
}

/// Which maker-note fields identify the camera, its owner, the moment or the place, by exiv2's tag name.
enum MakerNoteFields {
    /// Parts of exiv2 tag names that mark an identifying field. Exposure and lens optics data are not among
    /// them (the raw converter needs those); the lens's name is (lens corrections go by its numeric type).
    static let identifying = [
        "Serial", "Owner", "Artist", "Copyright", "ShutterCount", "ImageCount", "FileNumber", "ImageNumber", "UniqueID",
        "UUID", "Identifier", "Date", "TimeZone", "TimeInfo", "WorldTime", "TimeStamp", "GPS", "Location", "City",
        "Country", "Landmark", "Latitude", "Longitude", "Hometown", "Destination", "Baby", "PetName", "TravelDay", "Title",
        "LensModel", "LensMake", "LensType", "LensID", "Firmware", "Face",
    ]

    static func isIdentifying(_ name: String) -> Bool {
        // Pentax keeps the capture time apart from its date, as a field named just "Time" ("Time" alone would take
        // ExposureTime and the like).
        name == "Time" || identifying.contains { name.contains($0) }
    }

    /// Fields of notes exiv2 0.27 does not decode, by vendor and tag.
    static let undecoded: [String: [UInt16: String]] = [
        "Apple": [0x0003: "RunTime", 0x000B: "BurstUUID", 0x0011: "MediaGroupUUID", 0x0015: "ImageUniqueID",
                  0x0017: "LivePhotoVideoIndex", 0x0020: "ImageCaptureRequestID", 0x002B: "PhotoIdentifier"],
    ]

    /// Fields of notes exiv2 decodes without naming them (it shows them as numbers, or not at all), by vendor and
    /// tag, by ExifTool's names: listed besides exiv2's names.
    static let unnamed: [String: [UInt16: String]] = [
        "Fujifilm": [0x4100: "FacesDetected", 0x4103: "FacePositions", 0x4200: "NumFaceElements", 0x4201: "FaceElementTypes",
                     0x4203: "FaceElementPositions", 0x4282: "FaceRecInfo"],
        "Pentax": [0x022E: "Artist", 0x022F: "Copyright", 0x0230: "FirmwareVersion"],
    ]

    /// exiv2 groups that are IFDs of their own inside a maker note, by the tag of the entry that points to them.
    static let subIFDs: [String: UInt16] = [
        "OlympusEq": 0x2010, "OlympusCs": 0x2020, "OlympusRd": 0x2030, "OlympusRd2": 0x2031, "OlympusIp": 0x2040,
        "OlympusFi": 0x2050, "OlympusRi": 0x3000, "OlympusFe1": 0x2100, "OlympusFe2": 0x2200, "OlympusFe3": 0x2300,
        "OlympusFe4": 0x2400, "OlympusFe5": 0x2500, "OlympusFe6": 0x2600, "OlympusFe7": 0x2700, "OlympusFe8": 0x2800,
        "OlympusFe9": 0x2900,
    ]

    /// exiv2 groups that are binary arrays inside one maker-note entry: (the entry's tag, element size).
    static let arrays: [String: (UInt16, Int64)] = [
        "CanonCs": (0x0001, 2), "CanonSi": (0x0004, 2), "CanonPa": (0x0005, 2), "CanonCf": (0x000F, 2), "CanonPi": (0x0012, 2),
        "CanonFi": (0x0093, 2), "CanonPr": (0x00A0, 2), "CanonTi": (0x0035, 4),
    ]

    /// The binary array an exiv2 group lives in, by its name; Nikon's lens data (NikonLd1–4) and shot info
    /// (NikonSi…) count in bytes. Inside an enciphered version the bytes blanked are the ciphertext, so the
    /// deciphered value is the keystream, which says nothing about the original.
    static func array(_ group: String) -> (UInt16, Int64)? {
        if let known = arrays[group] { return known }
        if group.hasPrefix("NikonLd") { return (0x0098, 1) }
        if group.hasPrefix("NikonSi") { return (0x0091, 1) }
        return sonyArrays[group]
    }

    /// Sony's binary arrays, counted in bytes; 0x2010, 0x9050 and the 0x94xx blocks are enciphered by a byte
    /// substitution that maps 0 to 0, so a field blanked in the stored bytes deciphers to zeros. Sony2010, Sony9050
    /// and SonyShotInfo are `SonyMakerNote`'s (ExifTool's placements); the others exiv2's.
    static let sonyArrays: [String: (UInt16, Int64)] = [
        "Sony2010": (0x2010, 1), "Sony9050": (0x9050, 1), "SonyShotInfo": (0x3000, 1),
        "Sony2010e": (0x2010, 1), "SonySInfo1": (0x3000, 1), "SonyMisc3c": (0x9400, 1), "Sony2Fp": (0x9402, 1),
        "SonyMisc1": (0x9403, 1), "SonyMisc2b": (0x9404, 1),
    ]

    static func category(_ name: String) -> Category {
        NameClassifier.category(of: name, otherwise: .identity)
    }
}
