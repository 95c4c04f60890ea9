// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// Containers cleaned by overwriting metadata with padding of the same size (AVI JUNK chunks, ASF Padding
/// Objects, Matroska Void elements, MPEG-TS filler): no byte position moves, so indexes stay valid, and the
/// content check is one comparison of every coded range at the same offset in both files.
enum SameOffset {
    /// Writes the patched copy (cut at `size`, when a trailer goes) and says what was done.
    static func write(_ patches: InPlacePatches, size: Int64, format: String, from input: any ByteSource, to output: any OutputSink,
                      note: Note) throws -> CleanResult {
        try patches.plan(size: size, format: format).write(from: input, to: output)
        return CleanResult(method: .remux, notes: [note])
    }

    /// Every range in `core` is byte-identical at the same offset in both files. `sameLayout` says the
    /// cleaned file's scan found the same core (the ranges, and whatever else the format counts).
    /// A note for the report: what the padding was, and which indexes therefore stay valid.
    static func padded(_ text: String) -> Note { Note(.info, code: "in-place-padding", text) }

    static func verify(original: any ByteSource, cleaned: any ByteSource, core: [Range<Int64>], sameLayout: Bool,
                       method: String, part: String) throws -> ContentCheck {
        guard sameLayout else {
            return ContentCheck(method: method, passed: false, detail: "\(part) layout changed")
        }
        if let r = try ByteComparison.firstDifference(original, cleaned, at: core) {
            return ContentCheck(method: method, passed: false, detail: "\(part) at \(r.lowerBound) differs")
        }
        return ContentCheck(method: method, passed: true)
    }
}
