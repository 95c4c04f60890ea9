// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// A layout of chunks some of which hold a whole EXIF block (PNG `eXIf`, WebP `EXIF`): the first one is the
/// file's EXIF (its orientation is the one displayed), each is rebuilt with its kept entries, and one that does
/// not parse stands as a single item.
protocol ExifChunkLayout {
    associatedtype Content
    var contents: [Int: Content] { get set }
    var exif: ExifPayload? { get set }
    var exifChunk: Int? { get set }
    static func exifContent(_ payload: ExifPayload) -> Content
    static func itemContent(_ item: Int) -> Content
}

extension ExifChunkLayout {
    /// Itemises the EXIF block of chunk `index` (`data`, read at `origin`).
    mutating func addExifChunk(_ index: Int, _ data: [UInt8], origin: Int64, location: String, into found: inout ItemCollector) {
        let first = found.next
        guard let payload = found.exif(data, location: location, origin: origin) else {
            contents[index] = Self.itemContent(first)
            return
        }
        contents[index] = Self.exifContent(payload)
        if exif == nil {
            exif = payload
            exifChunk = index
        }
    }
}

extension PNGLayout: ExifChunkLayout {
    static func exifContent(_ payload: ExifPayload) -> Content { .exif(payload) }
    static func itemContent(_ item: Int) -> Content { .item(item) }
}

extension WebPLayout: ExifChunkLayout {
    static func exifContent(_ payload: ExifPayload) -> Content { .exif(payload) }
    static func itemContent(_ item: Int) -> Content { .item(item) }
}
