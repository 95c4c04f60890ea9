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
        func block(_ at: Int, _ what: String, notes: inout [Note]) throws -> Range<Int64>? {
            let offset = Int64(BigEndian.u32(head, at)), length = Int64(BigEndian.u32(head, at + 4))
            guard length > 0 else { return nil }
            guard offset <= source.size, length <= source.size - offset else {
                guard options.tolerateDamage else {
                    throw MetascrubError.truncated(format: "RAF", path: what, offset: offset, needed: offset + length - source.size)
                }
                notes.append(Note(.warning, code: "damaged-input",
                                  "damaged input: the \(what) at offset \(offset) runs past the end of the file; its bytes are copied as they are",
                                  offset: offset))
                return offset < source.size ? offset..<source.size : nil
            }
            return offset..<offset + length
        }
        let placeholder = TIFFStructure(order: .big, isBig: false, fileSize: source.size, firstIFD: 0)
        var layout = RawTIFFLayout(structure: placeholder)
        var items: [MetadataItem] = []
        var notes: [Note] = []
        for (at, what) in [(92, "CFA header"), (100, "CFA data")] {
            let cut = notes.count
            defer { if notes.count > cut { layout.truncated = true } }
            if let range = try block(at, what, notes: &notes) {
                layout.imageData.append(range)
                if at == 100 { layout.rawData = range }
            }
        }
        guard let jpeg = try block(84, "embedded JPEG", notes: &notes) else {
            return ScanResult(items: items, notes: notes, layout: layout)
        }
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
                inner.merge(into: &items, notes: &notes, layout: &layout, at: window.range.lowerBound)
                continue
            }
            layout.holes.append(segment.payload)
            items.append(MetadataItem(key: "preview:\(segment.name)", category: .embedded, location: "JPEG/\(segment.name)",
                                      offset: segment.payload.lowerBound, length: Int64(segment.payload.count),
                                      detail: "\(segment.name) segment of the embedded JPEG, \(segment.payload.count) bytes"))
            layout.actions[items.count - 1] = .blank(segment.payload)
        }
        return ScanResult(items: items, notes: notes, layout: layout)
    }
}
