// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// Proves a cleaned JPEG 2000 decodes as the original: every byte a decoder reads is the same. That is the
/// signature, file type and reader-requirements boxes, the header's decoding boxes, and every codestream byte
/// apart from its COM segments and tile-part lengths, each of which must shrink by exactly the comments removed.
enum JP2Verifier {
    static func verify(original: any ByteSource, _ before: JP2Layout, cleaned: any ByteSource,
        _ after: JP2Layout) throws -> ContentCheck {
        let method = "codestreams byte-identical apart from COM segments (tile-part lengths checked); "
            + "signature, ftyp and header boxes identical"
        var check = ContentCheck(method: method, passed: false)
        func fail(_ detail: String) -> ContentCheck {
            check.detail = detail
            return check
        }
        guard before.bare == after.bare else { return fail("codestream wrapper changed") }
        let a = decoding(before), b = decoding(after)
        guard a.ranges.count == b.ranges.count, a.streams.count == b.streams.count, !a.streams.isEmpty else {
            return fail("\(a.streams.count) codestreams and \(a.ranges.count) decoding boxes became "
                        + "\(b.streams.count) and \(b.ranges.count)")
        }
        for (x, y) in zip(a.ranges, b.ranges) {
            guard try ByteComparison.equal(original, x, cleaned,
                y) else { return fail("decoding box at \(x.lowerBound) differs") }
            check.identical.append((x, y))
        }
        for (x, y) in zip(a.streams, b.streams) {
            guard x.tileParts.count == y.tileParts.count else {
                return fail("codestream at \(x.range.lowerBound): \(x.tileParts.count) tile-parts became "
                            + "\(y.tileParts.count)")
            }
            for (t, (p, q)) in zip(x.tileParts, y.tileParts).enumerated() {
                let removed = x.commentBytes(inTilePart: t) - y.commentBytes(inTilePart: t)
                guard (p.psot == 0 && q.psot == 0) || Int64(p.psot) - removed == Int64(q.psot) else {
                    return fail("tile-part \(t + 1) at \(p.offset): length \(p.psot) became \(q.psot) "
                                + "with \(removed) comment bytes removed")
                }
            }
            guard let pairs = try sameConcatenation(original, x.codedRanges, cleaned, y.codedRanges) else {
                return fail("coded data of the codestream at \(x.range.lowerBound) differs")
            }
            check.identical += pairs
        }
        check.passed = true
        return check
    }

    /// The boxes and codestreams a decoder reads, in file order.
    static func decoding(_ layout: JP2Layout) -> (ranges: [Range<Int64>], streams: [J2KCodestream]) {
        var ranges: [Range<Int64>] = [], streams: [J2KCodestream] = []
        if layout.bare, case .codestream(let stream, _, _)? = layout.contents[0] { return ([], [stream]) }
        for (i, box) in layout.boxes.enumerated() {
            switch layout.contents[i] {
            case nil where JP2Layout.structure.contains(box.type): ranges.append(box.range)
            case .header(let children, let unknown)?:
                ranges += children.indices.filter { unknown[$0] == nil }.map { children[$0].range }
            case .codestream(let stream, _, _)?: streams.append(stream)
            default: break
            }
        }
        return (ranges, streams)
    }

    /// Whether the bytes of `x` in `a`, read in order, are the bytes of `y` in `b`; the compared piece pairs if so.
    static func sameConcatenation(_ a: any ByteSource, _ x: [Range<Int64>], _ b: any ByteSource,
                                  _ y: [Range<Int64>]) throws -> [(original: Range<Int64>, cleaned: Range<Int64>)]? {
        guard x.reduce(0, { $0 + $1.count }) == y.reduce(0, { $0 + $1.count }) else { return nil }
        var pairs: [(original: Range<Int64>, cleaned: Range<Int64>)] = []
        var i = 0, j = 0
        var p = x.first?.lowerBound ?? 0, q = y.first?.lowerBound ?? 0
        while i < x.count, j < y.count {
            let n = min(x[i].upperBound - p, y[j].upperBound - q)
            if n > 0 {
                guard try ByteComparison.equal(a, p..<(p + n), b, q..<(q + n)) else { return nil }
                pairs.append((p..<(p + n), q..<(q + n)))
            }
            p += n
            q += n
            if p == x[i].upperBound { i += 1; if i < x.count { p = x[i].lowerBound } }
            if q == y[j].upperBound { j += 1; if j < y.count { q = y[j].lowerBound } }
        }
        return pairs
    }
}

extension J2KCodestream {
    func commentBytes(inTilePart t: Int) -> Int64 {
        comments.filter { $0.tilePart == t }.reduce(0) { $0 + Int64($1.range.count) }
    }
}
