// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// The identifying fields of a Canon maker note, named here because exiv2 0.27 reads no CR3 and no maker note
/// kept inside a DNG's `DNGPrivateData`, and names no field inside `LensInfo`: the listed entries leave their
/// IFD, the CameraSettings lens type (element 22) and the lens serial number (the first 5 bytes of LensInfo,
/// ExifTool's `Canon:LensSerialNumber`) are blanked in place.
enum CanonMakerNote {
    static let fields: [UInt16: String] = [
        0x0007: "FirmwareVersion", 0x0008: "FileNumber", 0x0009: "OwnerName", 0x000C: "SerialNumber", 0x0028: "ImageUniqueID", 0x0035: "TimeInfo",
        0x0095: "LensModel", 0x0096: "InternalSerialNumber",
    ]
    /// The camera's model as the note names it (ExifTool's CanonImageType and CanonModelID): IFD0's Model again,
    /// so the same decision holds for them (`RawDecodeBisection`: removed where LibRaw decodes identically without
    /// them, kept with the reason where it does not or cannot be tried).
    static let modelFields: [UInt16: String] = [0x0006: "ImageType", 0x0010: "ModelID"]
    static let cameraSettingsTag: UInt16 = 0x0001
    static let lensInfoTag: UInt16 = 0x4019

    /// The lens serial number inside LensInfo, when there is one.
    static func lensSerial(_ entries: [MakerNoteIFD.Entry]) -> Range<Int64>? {
        guard let info = entries.first(where: { $0.tag == lensInfoTag }), info.value.count >= 5 else { return nil }
        return info.value.lowerBound..<info.value.lowerBound + 5
    }
}

extension RawTIFFScanner.Scanner {
    /// Lists the identifying fields of the Canon maker-note IFD at `ifd` (its `entries`, read with `order`).
    /// `named`: also the whole entries of `CanonMakerNote.fields` (false where exiv2 names them). `parent`: the
    /// item whose removal takes the fields with it (their actions then apply only while it stays).
    mutating func canonMakerNoteFields(_ entries: [MakerNoteIFD.Entry], ifd: Int64, order: ByteOrder, path: String,
                                       named: Bool = true, parent: Int? = nil) throws {
        func nonZero(_ range: Range<Int64>) throws -> Bool {
            try source.read(at: range.lowerBound, count: Int(range.count)).contains { $0 != 0 }
        }
        func list(_ key: String, _ category: Category, _ field: String, _ range: Range<Int64>, _ action: RawTIFFLayout.Action) {
            let item = add(key, category, location: "\(path)/\(field)", range: range, parent: parent, action: action)
            if let parent { layout.partOf[item] = parent }
        }
        for entry in entries {
            if named, entry.tag == CanonMakerNote.cameraSettingsTag, entry.value.count >= 46 {
                let lens = entry.value.lowerBound + 44..<entry.value.lowerBound + 46
                if try nonZero(lens) { list("makernote:CanonCs.LensType", .device, "CanonCs.LensType", lens, .blank(lens)) }
            }
            if let name = CanonMakerNote.modelFields[entry.tag], try nonZero(entry.value) {
                let item = add("makernote:Canon.\(name)", .device, location: "\(path)/Canon.\(name)", range: entry.value, parent: parent,
                               action: .drop(ifd: ifd, tag: entry.tag, zero: entry.value.count > 4 ? [entry.value] : [], order: order))
                if let parent { layout.partOf[item] = parent }
                layout.decoderItems.insert(item)
                continue
            }
            guard named, let name = CanonMakerNote.fields[entry.tag], try nonZero(entry.value) else { continue }
            list("makernote:Canon.\(name)", MakerNoteFields.category(name), "Canon.\(name)", entry.value,
                 .drop(ifd: ifd, tag: entry.tag, zero: entry.value.count > 4 ? [entry.value] : [], order: order))
        }
        if let serial = CanonMakerNote.lensSerial(entries), try nonZero(serial) {
            list("makernote:Canon.LensSerialNumber", .device, "Canon.LensInfo.LensSerialNumber", serial, .blank(serial))
        }
    }

    /// The maker note Adobe's converter keeps inside `DNGPrivateData` ("Adobe\0MakN", a big-endian length, the
    /// note's byte order and its offset in the original raw, then the note): its identifying fields are listed
    /// under the DNGPrivateData item `parent`, so they are blanked where a DNG needs the rest of it to decode
    /// identically. Only Canon notes are named; for another maker the whole entry stays the only item.
    mutating func dngPrivateMakerNote(_ value: Range<Int64>, path: String, parent: Int) throws {
        guard value.count > 22 else { return }
        let head = try source.read(at: value.lowerBound, count: 20)
        guard head.starts(with: Array("Adobe\0MakN".utf8)) else { return }
        let order: ByteOrder
        switch (head[14], head[15]) {
        case (0x49, 0x49): order = .little
        case (0x4D, 0x4D): order = .big
        default: return
        }
        let end = min(value.upperBound, value.lowerBound + 14 + Int64(BigEndian.u32(head, 10)))
        let note = value.lowerBound + 20..<end
        guard make.hasPrefix("Canon"), note.count > 2 else { return }
        // The note's value offsets count from the original raw's TIFF header.
        let shift = note.lowerBound - Int64(BigEndian.u32(head, 16))
        guard let entries = try? MakerNoteIFD.entries(source, at: note.lowerBound, base: shift, order: order, note: note) else { return }
        try canonMakerNoteFields(entries, ifd: note.lowerBound, order: order, path: "\(path)/MakerNote", parent: parent)
    }
}
