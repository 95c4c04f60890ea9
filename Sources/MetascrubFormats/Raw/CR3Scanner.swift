// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubNative

/// Canon CR3 (ISOBMFF, brand `crx `), cleaned in place like the TIFF raws, through the same layout: the TIFF
/// structures in `moov/uuid(Canon)` (CMT1 IFD0, CMT2 EXIF, CMT3 maker note, CMT4 GPS) lose their identifying
/// entries where they are; the movie, track and media header times are zeroed; the XMP box is emptied or
/// rebuilt in its space; the metadata segments of the THMB and PRVW JPEGs are blanked. The sensor data in
/// `mdat` is never touched and LibRaw proves it decodes the same.
enum CR3Scanner {
    static let canonUUID: [UInt8] = [0x85, 0xC0, 0xB6, 0x87, 0x82, 0x0F, 0x11, 0xE0, 0x81, 0x11, 0xF4, 0xCE, 0x46, 0x2B, 0x6A, 0x48]
    static let xmpUUID: [UInt8] = [0xBE, 0x7A, 0xCF, 0xCB, 0x97, 0xA9, 0x42, 0xE8, 0x9C, 0x71, 0x99, 0x94, 0x91, 0xE3, 0xAF, 0xAC]
    static let previewUUID: [UInt8] = [0xEA, 0xF4, 0x2B, 0x5E, 0x1C, 0x98, 0x4B, 0x88, 0xB9, 0xFB, 0xB7, 0xDC, 0x40, 0x6E, 0x4D, 0x16]
    struct Scanner {
        let source: any ByteSource
        let reader: BoxReader
        var found: ItemCollector
        var layout: RawTIFFLayout

        init(source: any ByteSource, options: ScanOptions, layout: RawTIFFLayout) {
            self.source = source
            self.reader = BoxReader(source, format: "CR3")
            self.found = ItemCollector(options)
            self.layout = layout
        }

        /// The boxes tiling `range` (`BoxReader`). A box running past the end of the file is cut there with a
        /// `damaged input` note (its bytes are copied as they are; under `damaged: refuse` it is an error), and when
        /// it is `mdat` the sensor data counts as cut (`RawTIFFLayout.truncated`); one running past its container
        /// is an error.
        mutating func boxes(in range: Range<Int64>, path: String, depth: Int) throws -> [Box] {
            do {
                return try reader.boxes(in: range, parentPath: path, depth: depth).boxes
            } catch let error as MetascrubError {
                guard case .truncated(_, _, let at, _) = error, found.options.tolerateDamage, range.contains(at),
                      var cut = try reader.header(at: at, containerEnd: .max, parentPath: path, topLevel: false) else { throw error }
                let before = try reader.boxes(in: range.lowerBound..<at, parentPath: path, depth: depth).boxes
                cut.size = source.size - at
                found.note(Note(.warning, code: "damaged-input",
                                "damaged input: \(cut.path) at offset \(at) runs past the end of the file; its bytes are copied as they are",
                                offset: at))
                // The sensor data cut: LibRaw would decode bytes that are not there (`RawTIFFLayout.truncated`).
                if cut.type == "mdat" { layout.truncated = true }
                return before + [cut]
            }
        }

        /// The children of `box` (see `boxes(in:)`).
        mutating func children(of box: Box, depth: Int) throws -> [Box] {
            try boxes(in: box.payloadRange, path: box.path, depth: depth)
        }

        mutating func run() throws {
            for box in try boxes(in: 0..<source.size, path: "", depth: 0) {
                switch (box.type, box.extendedType) {
                case ("moov", _): try movie(box)
                case ("uuid", let u?) where u == CR3Scanner.xmpUUID: try xmp(box)
                case ("uuid", let u?) where u == CR3Scanner.previewUUID:
                    // 8 bytes of Canon fields, then the PRVW box.
                    for child in try boxes(in: min(box.payloadOffset + 8, box.end)..<box.end, path: box.path, depth: 1) where child.type == "PRVW" {
                        try jpeg(in: child, path: "PRVW")
                    }
                case ("mdat", _): layout.imageData.append(box.payloadRange)
                case ("ftyp", _): continue
                default:
                    // A box no reader of the format knows (or free space holding old data): its payload is
                    // blanked in place, so nothing else moves.
                    guard try !HEIFScanner.isZero(source, box.payloadRange) else { continue }
                    let key = "cr3:box:\(box.type.description.trimmingWhitespace)"
                    let item = found.add(key, .content, box.payloadRange, location: box.path,
                                         detail: "\(box.payloadSize) bytes in a top-level box CR3 readers do not read",
                                         unknown: true)
                    layout.actions[item] = .blank(box.payloadRange)
                }
            }
        }

        mutating func movie(_ moov: Box) throws {
            for box in try children(of: moov, depth: 1) {
                switch box.type {
                case "mvhd": try headerTimes(box, path: "moov/mvhd")
                case "trak":
                    for t in try children(of: box, depth: 2) {
                        if t.type == "tkhd" { try headerTimes(t, path: "moov/trak/tkhd") }
                        if t.type == "mdia" {
                            for m in try children(of: t, depth: 3) {
                                if m.type == "mdhd" { try headerTimes(m, path: "moov/trak/mdia/mdhd") }
                                if m.type == "minf" { try timedMetadata(m) }
                            }
                        }
                    }
                case "uuid" where box.extendedType == CR3Scanner.canonUUID:
                    for child in try children(of: box, depth: 2) {
                        switch child.type {
                        case "CMT1", "CMT2", "CMT3", "CMT4": try tiff(child)
                        case "THMB": try jpeg(in: child, path: "moov/uuid/THMB")
                        default: continue
                        }
                    }
                default: continue
                }
            }
        }

        /// The CTMD track's records of type 1 (the capture time of each frame), blanked where they are. The
        /// other records (exposure, lens, colour data the converter may read) stay.
        mutating func timedMetadata(_ minf: Box) throws {
            guard let stbl = try children(of: minf, depth: 5).first(where: { $0.type == "stbl" }) else { return }
            let table = try children(of: stbl, depth: 6)
            func payload(_ type: FourCC) throws -> [UInt8]? {
                guard let b = table.first(where: { $0.type == type }), b.payloadSize <= 16 << 20 else { return nil }
                return try reader.payload(of: b)
            }
            guard let stsd = try payload("stsd"), stsd.count >= 16, String(decoding: stsd[12..<16], as: UTF8.self) == "CTMD",
                  let stsz = try payload("stsz"), stsz.count >= 12, let stsc = try payload("stsc"), stsc.count >= 8 else { return }
            var chunks: [Int64] = []
            if let co = try payload("co64"), co.count >= 8 {
                chunks = (0..<min(BigEndian.u32(co, 4), (co.count - 8) / 8)).map { Int64(clamping: TIFFStructure.u64(.big, co, 8 + $0 * 8)) }
            } else if let co = try payload("stco"), co.count >= 8 {
                chunks = (0..<min(BigEndian.u32(co, 4), (co.count - 8) / 4)).map { Int64(BigEndian.u32(co, 8 + $0 * 4)) }
            }
            let constant = BigEndian.u32(stsz, 4), count = BigEndian.u32(stsz, 8)
            guard count <= 1 << 20, constant != 0 || stsz.count >= 12 + count * 4 else { return }
            let sizes = (0..<count).map { Int64(constant != 0 ? constant : BigEndian.u32(stsz, 12 + $0 * 4)) }
            // stsc: (first chunk, samples per chunk) runs.
            let runs = (0..<min(BigEndian.u32(stsc, 4), (stsc.count - 8) / 12)).map { (BigEndian.u32(stsc, 8 + $0 * 12), BigEndian.u32(stsc, 12 + $0 * 12)) }
            var sample = 0
            for (k, chunk) in chunks.enumerated() {
                let perChunk = runs.last(where: { $0.0 <= k + 1 })?.1 ?? 1
                var at = chunk
                for _ in 0..<perChunk where sample < sizes.count {
                    // Offsets and sizes come from the file: anything past its end is only noted.
                    guard at >= 0, at <= source.size, sizes[sample] <= source.size - at else {
                        beyondEnd(at)
                        return
                    }
                    try ctmdSample(at..<at + sizes[sample])
                    at += sizes[sample]
                    sample += 1
                }
            }
        }

        mutating func beyondEnd(_ offset: Int64) {
            found.note(Note(.warning, code: "damaged-input",
                              "damaged input: a CTMD sample at offset \(offset) lies beyond the end of the file; it is copied as it is",
                              offset: offset))
        }

        mutating func ctmdSample(_ range: Range<Int64>) throws {
            let bytes = try source.read(at: range.lowerBound, count: Int(range.count))
            var at = 0
            while at + 12 <= bytes.count {
                let size = Int(ByteOrder.little.u32(bytes, at)), type = ByteOrder.little.u16(bytes, at + 4)
                guard size >= 12, at + size <= bytes.count else { break }
                let data = range.lowerBound + Int64(at + 12)..<range.lowerBound + Int64(at + size)
                if (7...9).contains(type) { try exifInfo(data) }
                if type == 1, bytes[at + 12..<at + size].contains(where: { $0 != 0 }) {
                    layout.holes.append(data)
                    let item = found.add("ctmd:TimeStamp", .time, data, location: "CTMD/record type 1",
                                         detail: "capture time of a frame in the CTMD track")
                    layout.actions[item] = .blank(data)
                }
                at += size
            }
        }

        /// A CTMD record of type 7, 8 or 9: sub-records of a 4-byte length, a 4-byte tag (0x8769 EXIF IFD, 0x927C
        /// Canon maker note) and a TIFF, cleaned in place like the CMT boxes. Anything that is not such a TIFF stays.
        mutating func exifInfo(_ data: Range<Int64>) throws {
            var at = data.lowerBound
            while at + 8 < data.upperBound {
                let head = try source.read(at: at, count: 8)
                let length = Int64(ByteOrder.little.u32(head, 0)), tag = ByteOrder.little.u32(head, 4)
                guard length >= 16, at + length <= data.upperBound, tag == 0x8769 || tag == 0x927C else { return }
                let window = WindowSource(source, at + 8..<at + length)
                guard let structure = try? RawTIFFScanner.structure(window) else { return }
                var inner = RawTIFFScanner.Scanner(source: window, options: found.options, layout: RawTIFFLayout(structure: structure))
                let path = tag == 0x8769 ? "CTMD/ExifIFD" : "CTMD/MakerNote"
                // Camera-written records end their IFD without the next-IFD offset, so both are read entry by entry.
                if tag == 0x927C {
                    try CR3Scanner.canonMakerNote(&inner, window, at: structure.firstIFD, path: path)
                } else {
                    let order = structure.order
                    for entry in try MakerNoteIFD.entries(window, at: structure.firstIFD, base: 0, order: order, note: 0..<window.size)
                    where RawTIFFScanner.exifIFDTags.contains(entry.tag) {
                        let (key, category) = inner.name(entry.tag, directory: .exif)
                        inner.add(key, category, location: "\(path)/\(String(format4hex: entry.tag))", range: entry.value,
                                  action: .drop(ifd: structure.firstIFD, tag: entry.tag, zero: entry.value.count > 4 ? [entry.value] : [], order: order))
                    }
                }
                // The record lies in the media data, which is otherwise compared byte for byte.
                if !inner.found.items.isEmpty { layout.holes.append(window.range) }
                inner.merge(into: &found, layout: &layout, at: window.range.lowerBound)
                at += length
            }
        }

        /// Creation and modification times of a movie, track or media header (version 0: 32-bit, 1: 64-bit).
        mutating func headerTimes(_ box: Box, path: String) throws {
            guard box.payloadSize >= 4 else { return }
            let version = try source.read(at: box.payloadOffset, count: 1)[0]
            let width: Int64 = version == 1 ? 8 : 4
            let times = box.payloadOffset + 4..<box.payloadOffset + 4 + 2 * width
            guard times.upperBound <= box.end, try source.read(at: times.lowerBound, count: Int(times.count)).contains(where: { $0 != 0 }) else { return }
            layout.actions[found.add("quicktime:CreateDate", .time, times, location: path, detail: "creation and modification times")] = .blank(times)
        }

        mutating func xmp(_ box: Box) throws {
            guard box.payloadSize <= TIFFScanner.parseLimit else { return }
            let packet = try reader.payload(of: box)
            guard packet.contains(where: { $0 != 0x20 && $0 != 0 }) else { return }
            let keys = found.xmp(packet, location: "uuid(XMP)", origin: box.payloadOffset)
            // An emptied packet itemises as one structural "xmp:packet": nothing left to remove.
            if keys.count == 1, let only = keys.first, found.items[only.key].key == "xmp:packet", found.items[only.key].category == .structure {
                found.items.removeLast()
                return
            }
            layout.xmp.append(.init(ifd: nil, tag: 0, value: box.payloadRange, packet: packet, keys: keys))
        }

        mutating func jpeg(in box: Box, path: String) throws {
            let head = try source.read(at: box.payloadOffset, count: Int(min(48, box.payloadSize)))
            guard let start = (0..<max(0, head.count - 1)).first(where: { head[$0] == 0xFF && head[$0 + 1] == 0xD8 }) else { return }
            let block = box.payloadOffset + Int64(start)..<box.end
            layout.imageData.append(block)
            try EmbeddedJPEG.itemise(source, block, path: path, into: &found, layout: &layout)
        }

        /// One CMT box: a TIFF counted from the box payload, scanned through a window.
        mutating func tiff(_ box: Box) throws {
            let window = WindowSource(source, box.payloadRange)
            var inner = RawTIFFScanner.Scanner(source: window, options: found.options,
                                               layout: RawTIFFLayout(structure: try RawTIFFScanner.structure(window)))
            if box.type == "CMT1" { try inner.run() }
            let ifd0 = box.type == "CMT1" ? nil
                : try inner.structure.readIFD(window, at: inner.structure.firstIFD, path: "\(box.type)", visited: &inner.visited, notes: &inner.found.notes)
            switch (box.type, ifd0) {
            case (_, nil): break
            case ("CMT2", let ifd0?): try inner.exifIFD(ifd0, path: "CMT2")
            case ("CMT3", let ifd0?):
                try CR3Scanner.canonMakerNote(&inner, window, at: ifd0.offset, path: "CMT3")
            case (_, let ifd0?): // CMT4: the GPS directory, every entry removable on its own.
                for entry in ifd0.entries {
                    let key = ExifTagNames.name(tag: entry.tag, ifd: .gps) ?? String(format4hex: entry.tag)
                    inner.add("exif:\(key)", .location, location: "CMT4/\(String(format4hex: entry.tag))", range: inner.range(entry),
                              value: inner.text(entry), action: .drop(ifd: ifd0.offset, tag: entry.tag, zero: inner.outOfLine(entry),
                                                                      order: inner.structure.order))
                }
            }
            inner.merge(into: &found, layout: &layout, at: box.payloadOffset)
        }
    }

    /// The identifying fields of a Canon maker-note IFD (CMT3, or a CTMD record's maker note) seen through
    /// `window` (`CanonMakerNote`).
    static func canonMakerNote(_ inner: inout RawTIFFScanner.Scanner, _ window: WindowSource, at ifd: Int64, path: String) throws {
        let entries = try MakerNoteIFD.entries(window, at: ifd, base: 0, order: inner.structure.order, note: 0..<window.size)
        try inner.canonMakerNoteFields(entries, ifd: ifd, order: inner.structure.order, path: path)
    }

    static func scan(_ source: any ByteSource, options: ScanOptions) throws -> ScanResult<RawTIFFLayout> {
        // The layout's TIFF structure is only a placeholder here (every drop names its own byte order).
        let placeholder = TIFFStructure(order: .little, isBig: false, fileSize: source.size, firstIFD: 0)
        var scanner = Scanner(source: source, options: options, layout: RawTIFFLayout(structure: placeholder))
        try scanner.run()
        return scanner.found.result(scanner.layout)
    }
}
