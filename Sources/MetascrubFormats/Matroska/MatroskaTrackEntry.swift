// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// What a TrackEntry may hold (RFC 9559 and the deprecated elements old muxers write), and what an ASS/SSA
/// script header a renderer reads. Any other TrackEntry child, and any other header line, is a stranger's bytes.
enum MatroskaTrackEntry {
    static let known: Set<UInt32> = [
        0xD7, 0x73C5, 0x83, 0xB9, 0x88, 0x55AA, 0x55AB, 0x55AC, 0x55AD, 0x55AE, 0x55AF, 0x9C, 0x6DE7, 0x6DF8,
        0x23E383, 0x234E7A, 0x23314F, 0x537F, 0x55EE, 0x41E4, 0x536E, 0x22B59C, 0x22B59D, 0x86, 0x63A2, 0x258688,
        0x7446, 0x3A9697, 0x3B4040, 0x26B240, 0xAA, 0x6FAB, 0x56AA, 0x56BB, 0x6624, 0xE0, 0xE1, 0xE2, 0xC0, 0xC1,
        0xC6, 0xC7, 0xC4, 0x6D80, 0xEC, 0xBF,
    ]

    /// `[Script Info]` keys libass and VSFilter read; the script's title is content and stays with it.
    static let scriptInfoKeys: Set<String> = [
        "title", "scripttype", "playresx", "playresy", "playdepth", "wrapstyle", "scaledborderandshadow", "kerning",
        "ycbcr matrix", "layoutresx", "layoutresy", "timer", "collisions", "language",
    ]
    /// Sections a renderer reads from a Matroska ASS header.
    static let sections: Set<String> = [
        "[script info]", "[v4+ styles]", "[v4 styles]", "[v4++ styles]", "[events]", "[fonts]", "[graphics]",
    ]

    /// Ranges (relative to the header) of the lines a renderer does not read: comments, editor keys such as
    /// `Original Script` and `Update Details`, and whole sections such as `[Aegisub Project Garbage]`. Each is
    /// overwritten in place with a `;` comment of spaces, so no byte moves.
    static func editorLines(_ header: [UInt8]) -> [Range<Int>] {
        var out: [Range<Int>] = []
        var section = "", at = 0
        while at < header.count {
            var end = at
            while end < header.count, header[end] != 0x0A, header[end] != 0x0D { end += 1 }
            let line = String(decoding: header[at..<end], as: UTF8.self).trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("[") {
                section = line.lowercased()
                if !sections.contains(section) { out.append(at..<end) }
            } else if !line.isEmpty {
                let key = line.split(separator: ":", maxSplits: 1).first
                    .map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
                let strange = !sections.contains(section) || line.hasPrefix(";") || line.hasPrefix("!:")
                    || (section == "[script info]" && !scriptInfoKeys.contains(key))
                let blanked = line.hasPrefix(";") && header[at..<end].allSatisfy { $0 == 0x3B || $0 == 0x20 }
                if strange && !blanked { out.append(at..<end) }
            }
            at = end + 1
        }
        return out
    }

    /// A line's bytes as a comment of spaces: `;` then spaces to the same length.
    static func blank(_ count: Int) -> [UInt8] { [0x3B] + Array(repeating: 0x20, count: max(0, count - 1)) }
}

extension MatroskaFormat.Scanner {
    /// An ASS/SSA track's CodecPrivate: the lines a renderer does not read are one `unknown` item, blanked in place.
    mutating func scriptHeader(_ c: EBMLElement, location: String) throws {
        guard c.dataSize <= 1 << 20 else { return }
        let header = try EBML.bytes(input, c, limit: 1 << 20)
        let lines = MatroskaTrackEntry.editorLines(header)
        guard !lines.isEmpty else { return }
        // One item per run of adjacent lines, covering just their bytes (what the residue proof looks for).
        var runs: [[Range<Int>]] = []
        for line in lines {
            if let last = runs.last?.last, line.lowerBound - last.upperBound <= 2 {
                runs[runs.count - 1].append(line)
            } else {
                runs.append([line])
            }
        }
        var patches: [(range: Range<Int64>, bytes: [UInt8])] = []
        for run in runs {
            let mine = run.map {
                (range: c.dataOffset + Int64($0.lowerBound)..<c.dataOffset + Int64($0.upperBound),
                 bytes: MatroskaTrackEntry.blank($0.count))
            }
            let span = mine[0].range.lowerBound..<mine[mine.count - 1].range.upperBound
            let text = header[run[0].lowerBound..<run[run.count - 1].upperBound]
            let value = found.options.includeValues ? String(decoding: text, as: UTF8.self) : nil
            let detail = "\(run.count) lines of the ASS script header no renderer reads "
                + "(editor project data, comments, script credits)"
            let item = found.add("matroska:ass-editor-lines", .content, span, location: "\(location)/CodecPrivate",
                                 value: value, detail: detail, unknown: true)
            layout.actions[item, default: []].append(.patch(mine))
            patches += mine
        }
        layout.holes += patches.map(\.range)
    }
}
