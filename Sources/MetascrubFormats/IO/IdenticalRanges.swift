// SPDX-License-Identifier: GPL-3.0-or-later

/// Ranges a content check compared byte for byte with the original's, for `ContentCheck.identical`: the residue
/// proof does not search them again (see docs/threat-model.md). A piece that continues the last one in both files
/// is merged into it (a movie's chunks lie back to back), so a long video hands over a few ranges, not one per chunk.
struct IdenticalRanges {
    private(set) var pairs: [(original: Range<Int64>, cleaned: Range<Int64>)] = []

    mutating func add(_ original: Range<Int64>, _ cleaned: Range<Int64>) {
        guard !original.isEmpty, original.count == cleaned.count else { return }
        if let last = pairs.last, last.original.upperBound == original.lowerBound, last.cleaned.upperBound == cleaned.lowerBound {
            pairs[pairs.count - 1] = (last.original.lowerBound..<original.upperBound, last.cleaned.lowerBound..<cleaned.upperBound)
        } else {
            pairs.append((original, cleaned))
        }
    }
}
