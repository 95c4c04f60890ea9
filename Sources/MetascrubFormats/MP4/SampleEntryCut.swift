// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// Bytes cut out of one sample entry of an `stsd` box: the entry's and the box's sizes shrink by them, the
/// entry count and every other byte stay.
struct SampleEntryCut: Sendable {
    var entry: Box
    var cut: Range<Int64>

    /// `bytes` (the whole `stsd` box, at `box.offset` in the file) without the cuts.
    static func apply(_ cuts: [SampleEntryCut], to bytes: [UInt8], of box: Box) throws -> [UInt8] {
        var out = bytes
        for c in cuts.sorted(by: { $0.cut.lowerBound > $1.cut.lowerBound }) {
            guard box.headerSize == 8, c.entry.headerSize == 8, c.entry.range.contains(c.cut.lowerBound),
                  c.cut.upperBound <= c.entry.end, box.range.contains(c.entry.offset) else {
                throw MetascrubError.malformed(format: "MP4", path: c.entry.path, offset: c.cut.lowerBound,
                                               reason: "a sample entry with a 64-bit size or a cut outside it")
            }
            let at = Int(c.cut.lowerBound - box.offset), entryAt = Int(c.entry.offset - box.offset)
            out.removeSubrange(at..<at + c.cut.count)
            let entrySize = BigEndian.u32(out, entryAt) - c.cut.count
            out.replaceSubrange(entryAt..<entryAt + 4, with: BigEndian.bytes32(entrySize))
        }
        out.replaceSubrange(0..<4, with: BigEndian.bytes32(out.count))
        return out
    }
}
