// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// Containers cleaned by overwriting metadata with padding of the same size (AVI JUNK chunks, ASF Padding
/// Objects, Matroska Void elements, MPEG-TS filler): no byte position moves, so indexes stay valid, and the
/// content check is one comparison of every coded range at the same offset in both files.
enum SameOffset {
    /// The ranges a clean covers with padding and the ones it zeroes: each group (a LIST INFO, a Tags element)
    /// whose items all go becomes padding whole, and removed items' own ranges are added unless padding
    /// already covers them.
    struct Padding {
        private(set) var padded: [Range<Int64>] = []
        private(set) var zeroed: [Range<Int64>] = []

        /// `outermostOnly`: groups nest (Matroska), so only the largest of nested removed groups is padded.
        init(groups: [(range: Range<Int64>, items: [Int])], removed: Set<Int>, outermostOnly: Bool = false) {
            let ordered = outermostOnly ? groups.sorted { $0.range.count > $1.range.count } : groups
            for group in ordered where !group.items.isEmpty && group.items.allSatisfy(removed.contains) {
                if outermostOnly { pad(group.range) } else { padded.append(group.range) }
            }
        }

        func covers(_ r: Range<Int64>) -> Bool { padded.contains { $0.lowerBound <= r.lowerBound && r.upperBound <= $0.upperBound } }

        mutating func pad(_ r: Range<Int64>) { if !covers(r) { padded.append(r) } }
        mutating func zero(_ r: Range<Int64>) { if !covers(r) { zeroed.append(r) } }
    }

    /// Writes the patched copy, without the trailer when its item goes, and says what was done.
    static func write(_ patches: InPlacePatches, trailer: Range<Int64>? = nil, format: String, from input: any ByteSource,
                      to output: any OutputSink, note: Note) throws -> CleanResult {
        let ledger = try patches.plan(size: trailer?.lowerBound ?? input.size, format: format).write(from: input, to: output)
        return CleanResult(method: .remux, notes: [note], ledger: ledger)
    }

    /// Every range in `core` is byte-identical at the same offset in both files. `sameLayout` says the
    /// cleaned file's scan found the same core (the ranges, and whatever else the format counts).
    /// A note for the report: what the padding was, and which indexes therefore stay valid.
    static func padded(_ text: String) -> Note { Note(.info, code: "in-place-padding", text) }

    /// `holes` (sorted) are bytes the cleaner overwrote inside coded data on purpose (neutralised SEI user data,
    /// blanked JPEG APPn in Motion-JPEG frames, the CRC-32s over them).
    static func verify(original: any ByteSource, cleaned: any ByteSource, core: [Range<Int64>], sameLayout: Bool,
                       method: String, part: String, holes: [Range<Int64>] = []) throws -> ContentCheck {
        guard sameLayout else {
            return ContentCheck(method: method, passed: false, detail: "\(part) layout changed")
        }
        if let r = try core.first(where: { try !ByteComparison.equal(original, $0, cleaned, $0, skipping: holes) }) {
            return ContentCheck(method: method, passed: false, detail: "\(part) at \(r.lowerBound) differs")
        }
        return ContentCheck(method: method + (holes.isEmpty ? "" : " outside blanked in-frame metadata"), passed: true)
    }
}
