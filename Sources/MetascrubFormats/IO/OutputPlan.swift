// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

#if canImport(Glibc)
import Glibc
#endif

/// A cleaned file described as an ordered list of pieces: ranges copied unchanged from the source, and new
/// bytes, each with the reason it may be in the output (`LedgerReason`). Remuxers build the plan first (so sizes and
/// offsets are known before anything is written), then write it in one pass; adjacent copies with the same reason
/// merge so kept image data moves in large blocks. A copy cannot be added without a reason; written bytes are
/// structure unless said otherwise. `ledger` is what the verifier checks the output against.
struct OutputPlan {
    enum Piece {
        case copy(offset: Int64, count: Int64, reason: LedgerReason)
        case bytes([UInt8], reason: LedgerReason)

        var reason: LedgerReason {
            switch self {
            case .copy(_, _, let reason), .bytes(_, let reason): reason
            }
        }
    }

    private(set) var pieces: [Piece] = []
    /// Bytes the plan writes so far: the output offset of whatever is appended next.
    private(set) var size: Int64 = 0

    mutating func copy(offset: Int64, count: Int64, because reason: LedgerReason) {
        guard count > 0 else { return }
        if case .copy(let previous, let n, let was)? = pieces.last, previous + n == offset, was == reason {
            pieces[pieces.count - 1] = .copy(offset: previous, count: n + count, reason: reason)
        } else {
            pieces.append(.copy(offset: offset, count: count, reason: reason))
        }
        size += count
    }

    mutating func copy(_ range: Range<Int64>, because reason: LedgerReason) {
        copy(offset: range.lowerBound, count: Int64(range.count), because: reason)
    }

    /// Copies `range` as coded data where it lies inside `coded` (sorted, disjoint: a track's chunks, an item's
    /// extents) and for `otherwise` elsewhere.
    mutating func copy(_ range: Range<Int64>, coded: [Range<Int64>], otherwise: LedgerReason) {
        var at = range.lowerBound
        var lo = 0, hi = coded.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if coded[mid].upperBound <= at { lo = mid + 1 } else { hi = mid }
        }
        for c in coded[lo...] {
            if c.lowerBound >= range.upperBound { break }
            if c.lowerBound > at { copy(at..<c.lowerBound, because: otherwise) }
            let end = min(c.upperBound, range.upperBound)
            if end > max(at, c.lowerBound) { copy(max(at, c.lowerBound)..<end, because: .codedData) }
            at = max(at, end)
        }
        if at < range.upperBound { copy(at..<range.upperBound, because: otherwise) }
    }

    mutating func append(_ bytes: [UInt8], because reason: LedgerReason = .structure) {
        guard !bytes.isEmpty else { return }
        if case .bytes(let previous, let was)? = pieces.last, was == reason, previous.count + bytes.count <= 1 << 16 {
            pieces[pieces.count - 1] = .bytes(previous + bytes, reason: reason)
        } else {
            pieces.append(.bytes(bytes, reason: reason))
        }
        size += Int64(bytes.count)
    }

    mutating func append(_ piece: Piece) {
        switch piece {
        case .copy(let offset, let count, let reason): copy(offset: offset, count: count, because: reason)
        case .bytes(let bytes, let reason): append(bytes, because: reason)
        }
    }

    /// Appends another plan's pieces (a body whose size had to be known before its header was written).
    mutating func append(contentsOf other: OutputPlan) {
        for piece in other.pieces { append(piece) }
    }

    /// Every piece with where it lands in the output, for the verifier's coverage check.
    var ledger: OutputLedger {
        var ledger = OutputLedger()
        var at: Int64 = 0
        for piece in pieces {
            switch piece {
            case .copy(let offset, let count, let reason):
                ledger.append(.init(output: at..<at + count, source: offset..<offset + count, reason: reason))
                at += count
            case .bytes(let bytes, let reason):
                ledger.append(.init(output: at..<at + Int64(bytes.count), source: nil, reason: reason))
                at += Int64(bytes.count)
            }
        }
        return ledger
    }

    /// Writes the plan and returns its ledger, for `CleanResult.ledger`.
    func write(from source: any ByteSource, to output: any OutputSink) throws -> OutputLedger {
        for piece in pieces {
            switch piece {
            case .copy(let offset, let count, _): try output.copy(from: source, offset: offset, count: count)
            case .bytes(let bytes, _): try output.write(bytes)
            }
        }
        return ledger
    }
}

/// Byte-for-byte comparison of ranges in two sources, read in bounded blocks (content verification).
enum ByteComparison {
    static func equal(_ a: any ByteSource, _ rangeA: Range<Int64>, _ b: any ByteSource, _ rangeB: Range<Int64>) throws -> Bool {
        guard rangeA.count == rangeB.count else { return false }
        var done: Int64 = 0
        let total = Int64(rangeA.count)
        while done < total {
            let n = Int(min(total - done, 1 << 20))
            // memcmp: Array's `!=` compares element by element; it was half the CPU of a 100 MB MP4 clean
            // (perf, issue 9).
            let differ = try a.withBytes(at: rangeA.lowerBound + done, count: n) { x in
                try b.withBytes(at: rangeB.lowerBound + done, count: n) { y in memcmp(x.baseAddress!, y.baseAddress!, n) != 0 }
            }
            if differ { return false }
            done += Int64(n)
        }
        return true
    }

    /// Equality of two same-sized ranges, ignoring the bytes that lie in `holes` (original offsets, sorted): the
    /// places a cleaner overwrote on purpose, such as neutralised SEI payloads.
    static func equal(_ a: any ByteSource, _ x: Range<Int64>, _ b: any ByteSource, _ y: Range<Int64>, skipping holes: [Range<Int64>]) throws -> Bool {
        var unused = IdenticalRanges()
        return try equal(a, x, b, y, skipping: holes, proving: &unused)
    }

    /// The same, adding each piece between holes that it compared to `proven`.
    static func equal(_ a: any ByteSource, _ x: Range<Int64>, _ b: any ByteSource, _ y: Range<Int64>, skipping holes: [Range<Int64>],
                      proving proven: inout IdenticalRanges) throws -> Bool {
        guard x.count == y.count else { return false }
        var at = x.lowerBound
        // Binary search to the first hole that ends inside x: a long video has a hole in every sample, and a
        // linear scan per range made verification quadratic in the number of frames.
        var lo = 0, hi = holes.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if holes[mid].upperBound <= x.lowerBound { lo = mid + 1 } else { hi = mid }
        }
        for hole in holes[lo...] {
            if hole.lowerBound >= x.upperBound { break }
            guard hole.overlaps(x) else { continue }
            if hole.lowerBound > at {
                let piece = at..<hole.lowerBound
                guard try equal(a, piece, b, shifted(piece, x, y)) else { return false }
                proven.add(piece, shifted(piece, x, y))
            }
            at = max(at, hole.upperBound)
        }
        guard at < x.upperBound else { return true }
        let rest = at..<x.upperBound
        guard try equal(a, rest, b, shifted(rest, x, y)) else { return false }
        proven.add(rest, shifted(rest, x, y))
        return true
    }

    /// `r` (inside `x`) moved to where `x` starts in `y`.
    private static func shifted(_ r: Range<Int64>, _ x: Range<Int64>, _ y: Range<Int64>) -> Range<Int64> {
        let d = y.lowerBound - x.lowerBound
        return (r.lowerBound + d)..<(r.upperBound + d)
    }

    /// The first range whose bytes differ between two files at the same offsets (cleaners that overwrite in place
    /// move nothing), or nil when all are equal.
    static func firstDifference(_ a: any ByteSource, _ b: any ByteSource, at ranges: [Range<Int64>]) throws -> Range<Int64>? {
        try ranges.first { try !equal(a, $0, b, $0) }
    }
}
