// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

extension OutputPlan {
    /// The plan's bytes, for small runs that go inside a rebuilt box (an `idat`).
    func materialise(from source: any ByteSource) throws -> [UInt8] {
        var out: [UInt8] = []
        for piece in pieces {
            switch piece {
            case .copy(let offset, let count, _): out += try source.read(at: offset, count: Int(count))
            case .bytes(let bytes, _): out += bytes
            }
        }
        return out
    }

    /// `box` rewritten around a spliced payload: a new header for the new size, then the payload.
    mutating func append(_ box: Box, spliced splice: ByteSplice) {
        append(BoxWriter.header(box.type, payloadSize: splice.newCount, extendedType: box.extendedType, preferLarge: box.sizeForm == .large))
        append(contentsOf: splice.plan)
    }
}

extension Box {
    /// The header size of this box rewritten around `splice` (see `OutputPlan.append(_:spliced:)`).
    func headerSize(spliced splice: ByteSplice) -> Int64 {
        Int64(BoxWriter.headerSize(payloadSize: splice.newCount, extendedType: extendedType, preferLarge: sizeForm == .large))
    }
}

/// A run of source bytes (a box payload) with some ranges cut out and some replaced by new bytes; it knows
/// where each kept byte lands, so offsets into the run (item extents, chunk offsets) can be rewritten.
struct ByteSplice {
    enum Problem: Error, Sendable, Equatable {
        case replacementOutside(Range<Int64>)
        case replacementsOverlap(Range<Int64>)
    }

    /// The old run (file offsets).
    let range: Range<Int64>
    /// The new run: kept source ranges and replacement bytes, in order.
    private(set) var plan = OutputPlan()
    /// Kept old ranges and where each starts in the new run (relative to its start).
    private var kept: [(old: Range<Int64>, new: Int64)] = []
    private var replaced: [(old: Range<Int64>, new: Range<Int64>)] = []

    /// `cuts` may overlap each other and stick out of `range` (they are merged and clipped); `replacements`
    /// must be non-empty, lie inside `range` and not overlap each other. A cut overlapping a replacement removes
    /// bytes too; the new bytes go where the replaced range started. Kept bytes inside `coded` (sorted, disjoint:
    /// samples, item extents) are coded data in the ledger, the others are `otherwise`.
    init(range: Range<Int64>, cuts: [Range<Int64>], replacements: [(range: Range<Int64>, bytes: [UInt8])] = [],
         coded: [Range<Int64>] = [], otherwise: LedgerReason = .structure) throws {
        self.range = range
        let sortedReplacements = replacements.sorted { $0.range.lowerBound < $1.range.lowerBound }
        for (i, r) in sortedReplacements.enumerated() {
            guard !r.range.isEmpty, r.range.lowerBound >= range.lowerBound, r.range.upperBound <= range.upperBound else {
                throw Problem.replacementOutside(r.range)
            }
            if i > 0, sortedReplacements[i - 1].range.upperBound > r.range.lowerBound { throw Problem.replacementsOverlap(r.range) }
        }
        let clippedCuts = cuts.map { max($0.lowerBound, range.lowerBound)..<max(max($0.lowerBound, range.lowerBound), min($0.upperBound, range.upperBound)) }
        let removed = Self.union(clippedCuts + sortedReplacements.map(\.range))
        var at = range.lowerBound
        var written: Int64 = 0
        var next = 0
        for gap in removed {
            if gap.lowerBound > at {
                plan.copy(at..<gap.lowerBound, coded: coded, otherwise: otherwise)
                kept.append((at..<gap.lowerBound, written))
                written += gap.lowerBound - at
            }
            // Replacements start inside the removed gap that covers them (gaps are unions of cuts and replacements).
            while next < sortedReplacements.count, sortedReplacements[next].range.lowerBound < gap.upperBound {
                let r = sortedReplacements[next]
                plan.append(r.bytes)
                replaced.append((r.range, written..<written + Int64(r.bytes.count)))
                written += Int64(r.bytes.count)
                next += 1
            }
            at = max(at, gap.upperBound)
        }
        if at < range.upperBound {
            plan.copy(at..<range.upperBound, coded: coded, otherwise: otherwise)
            kept.append((at..<range.upperBound, written))
        }
    }

    /// Size of the new run.
    var newCount: Int64 { plan.size }

    /// Where an old byte range lands in the new run (relative to its start): it must lie inside one kept
    /// piece, or be exactly a replaced range. nil when it was cut or straddles a cut.
    func map(_ old: Range<Int64>) -> Range<Int64>? {
        if let r = replaced.first(where: { $0.old == old }) { return r.new }
        // Binary search for the kept piece holding the start.
        var lo = 0, hi = kept.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if kept[mid].old.upperBound <= old.lowerBound { lo = mid + 1 } else { hi = mid }
        }
        if lo < kept.count {
            let piece = kept[lo]
            if piece.old.lowerBound <= old.lowerBound, old.upperBound <= piece.old.upperBound {
                let start = piece.new + (old.lowerBound - piece.old.lowerBound)
                return start..<start + Int64(old.count)
            }
        }
        // An empty range at a piece boundary (or at the end of the run) maps to the next kept byte.
        if old.isEmpty {
            if old.lowerBound == range.upperBound { return newCount..<newCount }
            if let piece = kept.first(where: { $0.old.upperBound == old.lowerBound }) {
                let end = piece.new + Int64(piece.old.count)
                return end..<end
            }
        }
        return nil
    }

    /// Sorted, merged union of ranges (empty ranges dropped).
    static func union(_ ranges: [Range<Int64>]) -> [Range<Int64>] { ranges.union() }

    /// `ranges` minus `minus`, both as unions (one merge pass over the two sorted lists).
    static func subtract(_ ranges: [Range<Int64>], _ minus: [Range<Int64>]) -> [Range<Int64>] {
        var out: [Range<Int64>] = []
        let holes = union(minus)
        var h = 0
        for r in union(ranges) {
            var at = r.lowerBound
            while h < holes.count, holes[h].upperBound <= at { h += 1 }
            var k = h
            while k < holes.count, holes[k].lowerBound < r.upperBound {
                if holes[k].lowerBound > at { out.append(at..<holes[k].lowerBound) }
                at = max(at, holes[k].upperBound)
                k += 1
            }
            if at < r.upperBound { out.append(at..<r.upperBound) }
        }
        return out
    }
}
