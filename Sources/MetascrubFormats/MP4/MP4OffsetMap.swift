// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

extension MP4Cleaner {
    /// Where old bytes land in the output, given the pieces and the size of the rebuilt movie box.
    struct OffsetMap {
        let pieces: [Piece]
        let starts: [Int64]
        /// Copied and spliced pieces (the ones old offsets can land in) by where they started in the input, for a
        /// binary search: a fragmented movie has thousands of pieces and as many offsets to map.
        let byOldStart: [(start: Int64, piece: Int)]

        init(pieces: [Piece], moovSize: Int64) {
            self.pieces = pieces
            var at: Int64 = 0
            var starts: [Int64] = []
            var byOldStart: [(start: Int64, piece: Int)] = []
            for (i, piece) in pieces.enumerated() {
                starts.append(at)
                at += piece.size(moovSize: moovSize)
                switch piece {
                case .copy(let box), .splice(let box, _): byOldStart.append((box.offset, i))
                default: break
                }
            }
            self.starts = starts
            self.byOldStart = byOldStart.sorted { $0.start < $1.start }
        }

        /// The new offset of an old byte range (a chunk; empty for a position), when it was copied whole.
        func newOffset(_ old: Range<Int64>) -> Int64? {
            // The last piece starting at or before the range; pieces do not overlap in the input.
            var lo = 0, hi = byOldStart.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if byOldStart[mid].start <= old.lowerBound { lo = mid + 1 } else { hi = mid }
            }
            guard lo > 0 else { return nil }
            let i = byOldStart[lo - 1].piece
            // A position (empty range) belongs to the box that holds it, not to the one ending there.
            func holds(_ r: Range<Int64>) -> Bool { old.isEmpty ? r.contains(old.lowerBound) : r.lowerBound <= old.lowerBound && old.upperBound <= r.upperBound }
            switch pieces[i] {
            case .copy(let box) where holds(box.range):
                return starts[i] + (old.lowerBound - box.offset)
            case .splice(let box, let splice) where holds(box.payloadRange):
                // A chunk may hold a same-length SEI replacement, so map its first and last bytes and check that
                // nothing between them was cut.
                guard let new = splice.map(old.lowerBound..<old.lowerBound + 1) else { return nil }
                if old.count > 1 {
                    guard let last = splice.map((old.upperBound - 1)..<old.upperBound),
                          last.lowerBound - new.lowerBound == Int64(old.count) - 1 else { return nil }
                }
                let header = Int64(BoxWriter.headerSize(payloadSize: splice.newCount, extendedType: box.extendedType,
                                                        preferLarge: box.sizeForm == .large))
                return starts[i] + header + new.lowerBound
            default:
                return nil
            }
        }
    }
}
