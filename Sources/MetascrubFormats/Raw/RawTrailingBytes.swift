// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

extension RawTIFFScanner.Scanner {
    /// Bytes after everything a TIFF-based raw's structure reaches (IFD tables, tag values, image data, maker notes,
    /// the sensor data): no reader reads them, so when they are not zero padding they are an `unknown` item, blanked
    /// in place like every other removal (nothing moves). LibRaw's decode of the cleaned file proves the sensor data
    /// did not need them. Gaps between structures are left alone: a maker note may point into them.
    mutating func itemiseTrailing() throws {
        let reach = spans + layout.imageData + makerNotes.map(\.range) + (layout.rawData.map { [$0] } ?? [])
        let reached = reach.map(\.upperBound).max() ?? structure.headerSize
        guard reached < structure.fileSize else { return }
        let tail = reached..<structure.fileSize
        guard try !HEIFScanner.isZero(source, tail) else { return }
        let item = add("raw:trailing", .content, location: "after the last structure", range: tail,
                       detail: "\(tail.count) bytes after everything the raw's structure refers to",
                       action: .blank(tail))
        found.items[item].isUnknown = true
        let shown = Int(min(Int64(tail.count), Int64(ContentInspector.limit)))
        found.inspect(item, payload: try source.read(at: tail.lowerBound, count: shown), origin: tail.lowerBound)
    }
}
