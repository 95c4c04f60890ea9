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

    /// The first residue per removed item, in output order; empty when none is found.
    func residues(original: any ByteSource, cleaned: any ByteSource, keptInOutput: [Range<Int64>]) throws -> [Residue] {
        let canaries = try CanaryExtractor.canaries(roles, original: original)
        guard !canaries.isEmpty else { return [] }
        let search = PatternSearch(canaries.map(\.bytes))
        let suspicious = try search.hits(in: cleaned).filter { hit in
            let span = hit.offset..<hit.offset + Int64(canaries[hit.pattern].bytes.count)
            return !keptInOutput.contains { $0.lowerBound <= span.lowerBound && span.upperBound <= $0.upperBound }
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
        var accounted: [Range<Int64>] = []
        var valueTexts: [[UInt8]] = []
        for index in roles.items.indices {
            if roles.removed(index) {
                if let parent = roles.items[index].parent, roles.items.indices.contains(parent), roles.removed(parent),
                   roles.precise(parent) != nil { continue }
                let source = try CanaryExtractor.source(of: index, roles, original)
                if let range = source.range { accounted.append(range) } else { valueTexts.append(source.bytes) }
            } else if !roles.exempt(index), let offset = roles.items[index].offset, let length = roles.items[index].length {
                accounted.append(offset..<offset + length)
            }
        }
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
}
