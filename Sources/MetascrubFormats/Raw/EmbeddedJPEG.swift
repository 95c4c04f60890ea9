// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// The metadata segments of a JPEG stored inside another file (a raw's preview or thumbnail), found by walking
/// its markers up to the first scan. Only segments whose payload is not already blank are listed.
enum EmbeddedJPEG {
    struct Segment {
        var name: String
        /// The payload after the marker and length, in file offsets.
        var payload: Range<Int64>
    }

    /// The one itemiser of an embedded JPEG's metadata segments for every raw container: each segment is a
    /// `preview:APPn` (or `preview:COM`) item, blanked in place, a declared hole in the JPEG that is otherwise
    /// compared byte for byte.
    static func itemise(_ source: any ByteSource, _ block: Range<Int64>, path: String, into found: inout ItemCollector,
                        layout: inout RawTIFFLayout) throws {
        for segment in try metadataSegments(source, block) { itemise(segment, path: path, into: &found, layout: &layout) }
    }

    /// One segment, for a caller that itemises some segments itself (RAF's APP1 EXIF, scanned inside).
    static func itemise(_ segment: Segment, path: String, into found: inout ItemCollector, layout: inout RawTIFFLayout) {
        layout.holes.append(segment.payload)
        let item = found.add("preview:\(segment.name)", .embedded, segment.payload, location: "\(path)/\(segment.name)",
                             detail: "\(segment.name) segment of an embedded JPEG, \(segment.payload.count) bytes")
        layout.actions[item] = .blank(segment.payload)
    }

    static func metadataSegments(_ source: any ByteSource, _ block: Range<Int64>) throws -> [Segment] {
        guard block.count >= 4, try source.read(at: block.lowerBound, count: 2) == [0xFF, 0xD8] else { return [] }
        var result: [Segment] = []
        var at = block.lowerBound + 2
        while at + 4 <= block.upperBound {
            let head = try source.read(at: at, count: 4)
            guard head[0] == 0xFF else { break }
            let marker = head[1]
            // Fill bytes, and standalone markers without a length.
            if marker == 0xFF { at += 1; continue }
            if marker == 0x01 || (0xD0...0xD7).contains(marker) { at += 2; continue }
            // Start of scan or end of image: no metadata after this point that a decoder would read.
            if marker == 0xDA || marker == 0xD9 { break }
            let length = Int64(BigEndian.u16(head, 2))
            guard length >= 2, at + 2 + length <= block.upperBound else { break }
            let payload = at + 4..<at + 2 + length
            // APP0 (JFIF), APP2 (ICC profile, MPF) and APP14 (Adobe colour transform) are needed to show the preview.
            let isMetadata = (0xE1...0xEF).contains(marker) && marker != 0xE2 && marker != 0xEE || marker == 0xFE
            if isMetadata, !payload.isEmpty, try source.read(at: payload.lowerBound, count: Int(payload.count)).contains(where: { $0 != 0 }) {
                result.append(Segment(name: marker == 0xFE ? "COM" : "APP\(marker - 0xE0)", payload: payload))
            }
            at += 2 + length
        }
        return result
    }
}
