// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// Phase One's maker note (an IIQ's EXIF MakerNote, right after the TIFF header): "IIII" (or "MMMM"), a "Raw"
/// signature, then the offset of a directory of 16-byte entries (tag, format size, byte size, value or offset),
/// every offset counting from the note's start (ExifTool `PhaseOne::Main`, LibRaw `parse_phase_one`). Entry 0x0110
/// is the sensor calibration, a directory of the same kind with 12-byte entries (no format) and offsets from its
/// own start. The sensor data (0x010F) sits inside the note, so nothing of it moves: identifying values are
/// blanked where they lie.
enum PhaseOneMakerNote {
    struct Entry {
        var tag: UInt32
        /// File offset and length of the value (the entry's last four bytes when it fits there).
        var value: Range<Int64>
    }

    /// Identifying entries of the main directory, by ExifTool's names. FirmwareVersions names the back, which
    /// LibRaw takes as the model: when LibRaw needs it, the bisection keeps it with its reason.
    static let fields: [UInt32: String] = [
        0x0102: "SerialNumber", 0x0112: "DateTimeOriginal", 0x0113: "ImageNumber", 0x0212: "UnknownDate",
        0x0301: "FirmwareVersions", 0x0412: "LensModel",
    ]
    /// Identifying entries of the sensor calibration directory.
    static let calibrationFields: [UInt32: String] = [0x0407: "SerialNumber"]
    static let calibrationTag: UInt32 = 0x0110
    static let rawDataTag: UInt32 = 0x010F

    /// The byte order of a Phase One directory starting with `head` ("IIII"/"MMMM" and, for the main directory,
    /// the "Raw" signature LibRaw checks), nil for anything else.
    static func order(_ head: [UInt8], main: Bool) -> ByteOrder? {
        guard head.count >= 12 else { return nil }
        let order: ByteOrder
        switch head.prefix(4) {
        case [0x49, 0x49, 0x49, 0x49]: order = .little
        case [0x4D, 0x4D, 0x4D, 0x4D]: order = .big
        default: return nil
        }
        return !main || order.u32(head, 4) >> 8 == 0x526177 ? order : nil
    }

    /// The entries of the directory whose header is at `base`, each value inside `within`.
    static func entries(_ source: any ByteSource, base: Int64, within: Range<Int64>, main: Bool) throws -> [Entry] {
        let fail = { (reason: String) in MetascrubError.malformed(format: "Phase One maker note", path: "MakerNote", offset: base, reason: reason) }
        guard base + 12 <= within.upperBound, let order = order(try source.read(at: base, count: 12), main: main) else {
            throw fail("no Phase One directory header")
        }
        let size: Int64 = main ? 16 : 12
        let at = base + Int64(order.u32(try source.read(at: base + 8, count: 4), 0))
        guard at >= within.lowerBound, at + 8 <= within.upperBound else { throw fail("the directory lies outside the maker note") }
        let count = Int64(order.u32(try source.read(at: at, count: 4), 0))
        guard count <= 8192, at + 8 + count * size <= within.upperBound else { throw fail("implausible Phase One directory") }
        let table = try source.read(at: at + 8, count: Int(count * size))
        var result: [Entry] = []
        for i in 0..<Int(count) {
            let e = i * Int(size)
            let length = Int64(order.u32(table, e + Int(size) - 8))
            let inline = at + 8 + Int64(e) + size - 4
            let start = length <= 4 ? inline : base + Int64(order.u32(table, e + Int(size) - 4))
            // A value outside the note cannot be blanked in place; it is skipped (and so never listed).
            guard start >= within.lowerBound, start + length <= within.upperBound else { continue }
            result.append(Entry(tag: order.u32(table, e), value: start..<start + length))
        }
        return result
    }
}

extension RawTIFFScanner.Scanner {
    /// Lists the identifying fields of a Phase One maker note and of its sensor calibration, blanked in place, and
    /// marks the sensor data as image data. `parent`: as in `makerNote`.
    mutating func phaseOneMakerNote(_ note: Range<Int64>, path: String, parent: Int?) throws {
        let main = try PhaseOneMakerNote.entries(source, base: note.lowerBound, within: note, main: true)
        var named: [(String, Range<Int64>)] = main.compactMap { entry in
            PhaseOneMakerNote.fields[entry.tag].map { ("PhaseOne.\($0)", entry.value) }
        }
        if let calibration = main.first(where: { $0.tag == PhaseOneMakerNote.calibrationTag }), calibration.value.count > 12 {
            let entries = try PhaseOneMakerNote.entries(source, base: calibration.value.lowerBound, within: calibration.value, main: false)
            named += entries.compactMap { entry in
                PhaseOneMakerNote.calibrationFields[entry.tag].map { ("PhaseOne.SensorCalibration.\($0)", entry.value) }
            }
        }
        if let raw = main.first(where: { $0.tag == PhaseOneMakerNote.rawDataTag }), raw.value.count > 4 {
            layout.imageData.append(raw.value)
            if raw.value.count > (layout.rawData?.count ?? 0) { layout.rawData = raw.value }
        }
        for (name, range) in named.sorted(by: { $0.1.lowerBound < $1.1.lowerBound }) {
            let value = try source.read(at: range.lowerBound, count: Int(range.count))
            // Already blank: what a clean leaves, so not listed (the clean stays a fixed point).
            guard value.contains(where: { $0 != 0 }) else { continue }
            let item = add("makernote:\(name)", MakerNoteFields.category(name), location: "\(path)/\(name)", range: range,
                           value: options.includeValues ? ValueText.render(value[...]) : nil, parent: parent, action: .blank(range))
            if let parent { layout.partOf[item] = parent }
        }
    }
}
