// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubFormats

/// A proof that does not trust the scanner: every removed item's recognisable bytes (`Canaries`) are searched in
/// the whole output, a window at a time. A hit outside the output's kept items is residue, unless the original
/// holds that string more often in what stays (image data, structure, kept items) than the removed items account
/// for: then the output's copy is explained by what stays. See docs/threat-model.md for what this proves.
struct ResidueProof {
    struct Residue: Equatable {
        /// The removed item whose bytes were found.
        var item: Int
        var key: String
        /// Where they start in the output.
        var offset: Int64
    }

    let roles: ItemRoles

    /// The first residue per removed item, in output order; empty when none is found. `copies` are ranges the
    /// content check compared byte for byte with the original's: where the original's range holds nothing the
    /// proof accounts to a removed item, any canary in the copy is one the original holds in what stays, which
    /// step 3 would explain, so those bytes are not searched (a JPEG's entropy-coded data).
    /// `keptUntouchedInOutput` are the kept output items other than the blocks the clean rebuilt without
    /// something: the canaries of an item removed from inside a kept block (a property of a kept XMP structure,
    /// a dataset of a kept IPTC block) are excused only there, since the rebuilt block is where a broken rebuild
    /// would have left them.
    func residues(original: any ByteSource, cleaned: any ByteSource, keptInOutput: [Range<Int64>],
                  keptUntouchedInOutput: [Range<Int64>]? = nil,
                  copies: [(original: Range<Int64>, cleaned: Range<Int64>)] = []) throws -> [Residue] {
        let canaries = try CanaryExtractor.canaries(roles, original: original)
        guard !canaries.isEmpty else { return [] }
        let search = PatternSearch(canaries.map(\.bytes))
        // Any range a removed item or a searched block names, however loosely (an XMP property's is its packet's
        // start), keeps a copy that overlaps it searched.
        let loose = roles.items.indices.compactMap { index -> Range<Int64>? in
            guard roles.removed(index) || !roles.exempt(index), let offset = roles.items[index].offset else { return nil }
            return offset..<offset + max(1, roles.items[index].length ?? 1)
        }
        let looseIndex = RangeOverlaps(loose)
        let skipped = copies.filter { !looseIndex.overlap($0.original) }.map(\.cleaned)
        let untouched = keptUntouchedInOutput ?? keptInOutput
        let suspicious = try search.hits(in: cleaned, skipping: skipped).filter { hit in
            let span = hit.offset..<hit.offset + Int64(canaries[hit.pattern].bytes.count)
            let excusing = roles.insideSurvivor(canaries[hit.pattern].item) ? untouched : keptInOutput
            return !excusing.contains { $0.lowerBound <= span.lowerBound && span.upperBound <= $0.upperBound }
        }
        guard !suspicious.isEmpty else { return [] }
        let explained = try explainedByWhatStays(Set(suspicious.map(\.pattern)).sorted(), canaries, original)
        var named = Set<Int>()
        var out: [Residue] = []
        for hit in suspicious where !explained.contains(hit.pattern) {
            let item = canaries[hit.pattern].item
            guard named.insert(item).inserted else { continue }
            out.append(Residue(item: item, key: roles.items[item].key, offset: hit.offset))
        }
        return out
    }

    /// Canaries (indices into `canaries`) that the original holds more often outside the removed items' ranges
    /// and the searched kept-with-a-reason blocks than the removed items whose range is not their own (an XMP
    /// property) hold them: the output's copy may be the one that stays.
    private func explainedByWhatStays(_ suspects: [Int], _ canaries: [Canary], _ original: any ByteSource) throws -> Set<Int> {
        let (accounted, valueTexts) = try accountedRanges(original)
        let search = PatternSearch(suspects.map { canaries[$0].bytes })
        var outside = [Int](repeating: 0, count: suspects.count)
        for hit in try search.hits(in: original, limit: 100_000) {
            let span = hit.offset..<hit.offset + Int64(search.patterns[hit.pattern].count)
            if !accounted.contains(where: { $0.lowerBound <= span.lowerBound && span.upperBound <= $0.upperBound }) { outside[hit.pattern] += 1 }
        }
        var inValues = [Int](repeating: 0, count: suspects.count)
        for text in valueTexts { for hit in search.hits(in: text) { inValues[hit.pattern] += 1 } }
        return Set(suspects.indices.filter { outside[$0] > inValues[$0] }.map { suspects[$0] })
    }

    /// The original's ranges whose canaries belong to removed items (their own ranges) or are searched inside
    /// (kept-with-a-reason blocks), and the value texts of removed items whose canaries came from their values.
    private func accountedRanges(_ original: any ByteSource) throws -> (ranges: [Range<Int64>], values: [[UInt8]]) {
        var accounted: [Range<Int64>] = []
        var valueTexts: [[UInt8]] = []
        for index in roles.items.indices {
            if roles.removed(index) {
                if let parent = roles.items[index].parent, roles.items.indices.contains(parent), roles.removed(parent),
                   roles.precise(parent) != nil { continue }
                let source = try CanaryExtractor.source(of: index, roles, original)
                if let range = source.range { accounted.append(range) } else { valueTexts.append(source.bytes) }
            } else if roles.findings[index].disposition == .keep, !roles.exempt(index),
                      let offset = roles.items[index].offset, let length = roles.items[index].length {
                accounted.append(offset..<offset + length)
            }
        }
        return (accounted, valueTexts)
    }
}

/// Whether any of many ranges overlaps a given one, in O(log n) a question: a long video's content check names
/// thousands of compared pieces and it may remove as many SEI payloads, and testing every pair was quadratic.
struct RangeOverlaps {
    /// The ranges' starts, sorted, and the furthest end among the ranges up to each.
    private let starts: [Int64]
    private let reach: [Int64]

    init(_ ranges: [Range<Int64>]) {
        let sorted = ranges.filter { !$0.isEmpty }.sorted { $0.lowerBound < $1.lowerBound }
        starts = sorted.map(\.lowerBound)
        var furthest = Int64.min
        reach = sorted.map { furthest = max(furthest, $0.upperBound); return furthest }
    }

    /// Some range starts before `range` ends and ends after it starts.
    func overlap(_ range: Range<Int64>) -> Bool {
        guard !range.isEmpty else { return false }
        var lo = 0, hi = starts.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if starts[mid] < range.upperBound { lo = mid + 1 } else { hi = mid }
        }
        return lo > 0 && reach[lo - 1] > range.lowerBound
    }
}
