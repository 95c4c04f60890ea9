// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// Bytes inside `mdat` that no track's chunks reference: no player reads them, so they are not media, and a
/// tool that appends a name and a position there leaves a file that still plays. Each run of such bytes that
/// is not all zeros is an item (`container:unreferenced`) cut out of `mdat` when it goes, and what it holds is
/// itemised (`ContentInspector`). Only movies whose every chunk is located with certainty are looked at:
/// fragmented movies (their data is referenced from `moof`), tracks with data in other files, damaged tables.
extension MP4Scanner {
    /// Runs listed one by one; beyond this many, the rest of an mdat's runs join the last item.
    static let unreferencedItems = 16

    mutating func scanUnreferenced() throws {
        guard !layout.fragmented, layout.moov != nil,
              layout.tracks.allSatisfy({ $0.selfContained && $0.samples.sizesKnown && $0.samples.damage == nil }) else { return }
        let referenced = layout.tracks.flatMap { $0.samples.chunks.map(\.range) }
        for box in layout.top where box.type == "mdat" && box.payloadSize > 0 {
            let gaps = ByteSplice.subtract([box.payloadRange], referenced)
            var listed = 0
            var last: Int?
            for gap in gaps where try !isZero(gap) {
                if listed >= Self.unreferencedItems, let last, case .cut(let list) = layout.edits[last] {
                    layout.edits[last] = .cut(list + [gap])
                    continue
                }
                let item = found.add("container:unreferenced", .content, gap, location: "\(box.path)@\(gap.lowerBound)",
                                     detail: "\(gap.count) bytes inside mdat that no track references (no player reads them)", unknown: true)
                layout.edits[item] = .cut([gap])
                found.inspect(item, payload: try source.read(at: gap.lowerBound, count: Int(min(Int64(gap.count), Int64(ContentInspector.limit)))),
                              origin: gap.lowerBound)
                listed += 1
                last = item
            }
        }
    }

    private func isZero(_ range: Range<Int64>) throws -> Bool {
        var at = range.lowerBound
        while at < range.upperBound {
            let n = Int(min(range.upperBound - at, 1 << 20))
            if try source.read(at: at, count: n).contains(where: { $0 != 0 }) { return false }
            at += Int64(n)
        }
        return true
    }
}
