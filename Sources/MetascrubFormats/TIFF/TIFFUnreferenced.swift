// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// Bytes of a TIFF that no IFD, tag value or image block refers to: no reader reads them, so they are neither image
/// nor structure, and a tool that appends a name or a position there (or leaves an old IFD behind when it writes a
/// new one) leaves a file every viewer still opens. Each run of such bytes that is not all zeros (word-alignment
/// padding is) is an `unknown` item; the writer rebuilds the file from what was read, so removing it costs nothing.
extension TIFFScanner.Scanner {
    /// Runs listed one by one; beyond this many, the last item says more follow.
    static let unreferencedItems = 16

    mutating func itemiseUnreferenced() throws {
        let structure = self.structure
        var referenced: [Range<Int64>] = [0..<structure.headerSize]
        let countSize: Int64 = structure.isBig ? 8 : 2
        for node in layout.nodes {
            let ifd = node.ifd
            // Entries of unknown types were dropped when read: the table's end follows from the stored count.
            let stored = try source.read(at: ifd.offset, count: Int(countSize))
            let count = structure.isBig ? Int64(clamping: TIFFStructure.u64(structure.order, stored, 0))
                : Int64(structure.order.u16(stored, 0))
            let entries = max(count, Int64(ifd.entries.count))
            let table = countSize + entries * structure.entrySize + structure.inlineCapacity
            referenced.append(ifd.offset..<ifd.offset + table)
            for (entry, fate) in zip(ifd.entries, node.fates) {
                referenced.append(entry.valueOffset..<entry.valueOffset + entry.byteCount)
                if case .data(let ranges) = fate { referenced += ranges }
            }
        }
        let gaps = ByteSplice.subtract([0..<structure.fileSize], referenced)
        var listed = 0
        for gap in gaps where try !HEIFScanner.isZero(source, gap) {
            listed += 1
            let more = listed == Self.unreferencedItems
            let item = found.add("tiff:unreferenced", .content, gap, location: "\(structure.format)@\(gap.lowerBound)",
                                 detail: "\(gap.count) bytes no IFD, tag value or image refers to"
                                     + (more ? "; more runs follow" : ""), unknown: true)
            let shown = Int(min(Int64(gap.count), Int64(ContentInspector.limit)))
            found.inspect(item, payload: try source.read(at: gap.lowerBound, count: shown), origin: gap.lowerBound)
            if more { break }
        }
    }
}
