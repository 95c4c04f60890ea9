// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// AIFF and AIFF-C (FORM AIFF/AIFC, big-endian): NAME, AUTH, (c), ANNO, COMT, APPL, ID3 and XMP chunks go per
/// policy; COMM, SSND, FVER, MARK (loop markers), INST, AESD and CHAN are kept byte for byte.
enum AIFFFormat {
    static let structure: Set<String> = ["COMM", "SSND", "FVER", "INST", "AESD", "CHAN"]

    static let audio = IFFAudio(format: "AIFF", namespace: "aiff", forms: ["AIFF", "AIFC"]) { id in
        if structure.contains(id) { return .structure }
        switch id {
        case "ID3 ", "id3 ": return .id3
        case "XMP ": return .xmp
        // Marker positions with names an editor gave them: no decoder reads them.
        case "MARK": return .known("aiff:MARK", .content, "MARK (named markers) chunk")
        case "NAME": return .known("aiff:NAME", .content, "NAME (title) chunk")
        case "AUTH": return .known("aiff:AUTH", .identity, "AUTH (author) chunk")
        case "(c) ": return .known("aiff:(c)", .identity, "copyright chunk")
        case "ANNO": return .known("aiff:ANNO", .content, "ANNO (annotation) chunk")
        case "COMT": return .known("aiff:COMT", .content, "COMT (timestamped comments) chunk")
        case "APPL": return .known("aiff:APPL", .embedded, "APPL application-specific data")
        case "MIDI": return .known("aiff:MIDI", .content, "MIDI data chunk")
        case "JUNK", "PAD ", "FLLR": return .filler
        default: return .unknown(id, namespace: "aiff")
        }
    }
}
