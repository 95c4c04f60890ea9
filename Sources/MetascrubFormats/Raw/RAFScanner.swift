// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// Fujifilm RAF: a fixed big-endian header pointing at an embedded JPEG (which carries the file's EXIF, Fuji
/// maker note included), the CFA header (raw dimensions, white balance) and the CFA data. Cleaned in place
/// like the TIFF raws: the JPEG's EXIF is scanned through a window and loses its identifying entries where
/// they are; its other metadata segments are blanked; the CFA header and data are never touched.
enum RAFScanner {
    static let signature = Array("FUJIFILMCCD-RAW".utf8)

    static func scan(_ source: any ByteSource, options: ScanOptions) throws -> ScanResult<RawTIFFLayout> {
        let head = try source.read(at: 0, count: 108, format: "RAF", path: "header")
        guard head.starts(with: signature) else {
            throw MetascrubError.malformed(format: "RAF", path: "header", offset: 0, reason: "no FUJIFILMCCD-RAW signature")
        }
        var found = ItemCollector(options)
        func block(_ at: Int, _ what: String, into found: inout ItemCollector) throws -> Range<Int64>? {
            let offset = Int64(BigEndian.u32(head, at)), length = Int64(BigEndian.u32(head, at + 4))
            guard length > 0 else { return nil }
            guard offset <= source.size, length <= source.size - offset else {
                guard options.tolerateDamage else {
                    throw MetascrubError.truncated(format: "RAF", path: what, offset: offset, needed: offset + length - source.size)
                }
                found.note(Note(.warning, code: "damaged-input",
                                  "damaged input: the \(what) at offset \(offset) runs past the end of the file; its bytes are copied as they are",
                                  offset: offset))
                return offset < source.size ? offset..<source.size : nil
            }
            return offset..<offset + length
        }
        let placeholder = TIFFStructure(order: .big, isBig: false, fileSize: source.size, firstIFD: 0)
        var layout = RawTIFFLayout(structure: placeholder)
        for (at, what) in [(92, "CFA header"), (100, "CFA data")] {
            let cut = found.notes.count
            defer { if found.notes.count > cut { layout.truncated = true } }
            if let range = try block(at, what, into: &found) {
                layout.imageData.append(range)
                if at == 100 { layout.rawData = range }
            }
        }
        guard let jpeg = try block(84, "embedded JPEG", into: &found) else { return found.result(layout) }
        layout.imageData.append(jpeg)
        for segment in try EmbeddedJPEG.metadataSegments(source, jpeg) {
            let exif = Array("Exif\0\0".utf8)
            if segment.name == "APP1", segment.payload.count > 14,
               try source.read(at: segment.payload.lowerBound, count: 6) == exif {
                let window = WindowSource(source, segment.payload.lowerBound + 6..<segment.payload.upperBound)
                var inner = RawTIFFScanner.Scanner(source: window, options: options,
                                                   layout: RawTIFFLayout(structure: try RawTIFFScanner.structure(window)))
                try inner.run()
                // Every change inside the EXIF is a deliberate hole in the JPEG that is otherwise compared.
                layout.holes.append(window.range)
                inner.merge(into: &found, layout: &layout, at: window.range.lowerBound)
                continue
            }
            EmbeddedJPEG.itemise(segment, path: "JPEG", into: &found, layout: &layout)
        }
        return found.result(layout)
    }
}
