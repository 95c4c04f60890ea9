// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// A range of a source proven byte-identical to a range of the parsed file (`JPEGStructure.Segment.copiedFrom`).
/// `source` names the object, which the verification holds for as long as it uses the structure.
struct CopiedRun: Sendable, Equatable {
    var source: ObjectIdentifier
    var range: Range<Int64>
}

/// The original's entropy-coded runs, offered to the re-scan of its cleaned copy. A remux copies each run
/// unchanged, so instead of walking the copy byte by byte for the marker that ends it (memchr over every 0xFF),
/// the parse compares the copy with the run (one memcmp). The walk's answer depends only on the bytes it looked
/// at, which are exactly the run (its data, then the 0xFF and the marker code it stopped at): when the bytes are
/// equal the walk would stop at the same place, and when they are not (a transformed image, a faulty cleaner)
/// the parse walks as before. So the hint changes how the end is found, never where it is.
struct EntropyHint {
    let original: any ByteSource
    let runs: [Range<Int64>]

    init(original: any ByteSource, _ structure: JPEGStructure) {
        self.original = original
        self.runs = structure.entropyRuns
    }

    /// Where the `index`th scan's data ends in `cleaned` (its data starting at `start`), when it is a copy of the
    /// original's run; nil (walk it) otherwise. Only for sources in memory: a large file would be read again.
    func copy(of index: Int, at start: Int64, in cleaned: any ByteSource) throws -> (end: Int64, run: CopiedRun)? {
        guard index < runs.count, original.isInMemory, cleaned.isInMemory else { return nil }
        let run = runs[index]
        let count = Int64(run.count)
        guard count >= 2, start >= 0, start <= cleaned.size - count else { return nil }
        guard try ByteComparison.equal(original, run, cleaned, start..<(start + count)) else { return nil }
        return (start + count - 2, CopiedRun(source: ObjectIdentifier(original), range: run))
    }
}
