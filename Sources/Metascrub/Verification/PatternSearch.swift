// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubFormats

/// Many byte patterns searched at once over a whole `ByteSource`, a window at a time (Wu–Manber with two-byte
/// blocks). The residue proof runs it over every output: with patterns of six bytes or more it looks at about one
/// position in five, so a JPEG batch pays little for it.
struct PatternSearch {
    /// One occurrence: which pattern, and where it starts.
    struct Hit: Equatable {
        var pattern: Int
        var offset: Int64
    }

    let patterns: [[UInt8]]
    /// The shortest pattern's length: the window the shift table looks through.
    private let window: Int
    private let longest: Int
    /// How far the window may move when its last two bytes are this block.
    private var shift: [UInt8]
    /// Patterns whose window ends with this block (for blocks whose shift is 0).
    private var candidates: [Int: [Int]] = [:]

    /// Bytes read per step; consecutive windows overlap by one pattern length less one byte.
    static let chunk = 1 << 20

    /// `patterns` must each be at least two bytes long.
    init(_ patterns: [[UInt8]]) {
        self.patterns = patterns
        window = max(2, patterns.map(\.count).min() ?? 2)
        longest = patterns.map(\.count).max() ?? 0
        let most = min(window - 1, 255)
        shift = [UInt8](repeating: UInt8(most), count: 1 << 16)
        for (index, pattern) in patterns.enumerated() {
            for j in 0..<(window - 1) {
                let block = Int(pattern[j]) << 8 | Int(pattern[j + 1])
                let distance = UInt8(min(window - 2 - j, most))
                if distance < shift[block] { shift[block] = distance }
            }
            let last = Int(pattern[window - 2]) << 8 | Int(pattern[window - 1])
            candidates[last, default: []].append(index)
        }
    }

    var isEmpty: Bool { patterns.isEmpty }

    /// Every occurrence in `source`, in order of offset (at most `limit`). Occurrences lying wholly inside one of
    /// `skipping` (sorted, disjoint) are not looked for; those that reach into one are.
    func hits(in source: any ByteSource, skipping: [Range<Int64>] = [], limit: Int = 1000) throws -> [Hit] {
        guard !patterns.isEmpty, source.size >= Int64(window) else { return [] }
        var found: [Hit] = []
        for part in Self.parts(of: 0..<source.size, skipping: skipping, margin: Int64(longest - 1)) where found.count < limit {
            var start = part.lowerBound
            while start < part.upperBound, found.count < limit {
                // Each step reports only matches that start in its own chunk; the overlap lets them end in the next.
                let count = Int(min(Int64(Self.chunk + longest - 1), part.upperBound - start))
                let own = min(Self.chunk, count)
                try source.withBytes(at: start, count: count) { bytes in
                    search(bytes, starts: own, base: start, into: &found, limit: limit)
                }
                start += Int64(Self.chunk)
            }
        }
        return found
    }

    /// `whole` less the skipped ranges, each part widened by `margin` into its neighbours so that a match
    /// starting in a part and ending in a skipped range is still whole in it.
    static func parts(of whole: Range<Int64>, skipping: [Range<Int64>], margin: Int64) -> [Range<Int64>] {
        var parts: [Range<Int64>] = []
        var at = whole.lowerBound
        for skip in skipping.sorted(by: { $0.lowerBound < $1.lowerBound }) where skip.count > 2 * margin {
            let inner = (skip.lowerBound + margin)..<(skip.upperBound - margin)
            if inner.lowerBound > at { parts.append(at..<min(inner.lowerBound, whole.upperBound)) }
            at = max(at, inner.upperBound)
        }
        if at < whole.upperBound { parts.append(at..<whole.upperBound) }
        return parts
    }

    /// Every occurrence in a buffer already in memory.
    func hits(in bytes: [UInt8]) -> [Hit] {
        var found: [Hit] = []
        bytes.withUnsafeBytes { search($0, starts: bytes.count, base: 0, into: &found, limit: Int.max) }
        return found
    }

    private func search(_ text: UnsafeRawBufferPointer, starts: Int, base: Int64, into found: inout [Hit], limit: Int) {
        let n = text.count
        guard n >= window, let t = text.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        shift.withUnsafeBufferPointer { shiftTable in
            let shift = shiftTable.baseAddress!
            var end = window - 1
            while end < n {
                // The hot loop: two loads and a table lookup per step, most steps moving `window - 1` bytes.
                let block = Int(t[end - 1]) &<< 8 | Int(t[end])
                let distance = Int(shift[block])
                if distance > 0 {
                    end &+= distance
                    continue
                }
                let at = end - (window - 1)
                if at < starts, let list = candidates[block] {
                    for index in list {
                        let count = patterns[index].count
                        guard at + count <= n else { continue }
                        let same = patterns[index].withUnsafeBytes { p in memcmp(p.baseAddress!, t + at, count) == 0 }
                        if same, found.count < limit { found.append(Hit(pattern: index, offset: base + Int64(at))) }
                    }
                }
                end &+= 1
            }
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif
