// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// AIFF and AIFF-C (FORM AIFF/AIFC, big-endian): NAME, AUTH, (c), ANNO, COMT, APPL, ID3 and XMP chunks go per
/// policy; COMM, SSND, FVER, MARK (loop markers), INST, AESD and CHAN are kept byte for byte.
enum AIFFFormat {
    static let structure: Set<String> = ["COMM", "SSND", "FVER", "MARK", "INST", "AESD", "CHAN"]

    static let audio = IFFAudio(format: "AIFF", namespace: "aiff", forms: ["AIFF", "AIFC"]) { id in
        if structure.contains(id) { return .structure }
        switch id {
        case "ID3 ", "id3 ": return .id3
        case "XMP ": return .xmp
        case "NAME": return .item(key: "aiff:NAME", category: .content, detail: "NAME (title) chunk", unknown: false)
        case "AUTH": return .item(key: "aiff:AUTH", category: .identity, detail: "AUTH (author) chunk", unknown: false)
        case "(c) ": return .item(key: "aiff:(c)", category: .identity, detail: "copyright chunk", unknown: false)
        case "ANNO": return .item(key: "aiff:ANNO", category: .content, detail: "ANNO (annotation) chunk", unknown: false)
        case "COMT": return .item(key: "aiff:COMT", category: .content, detail: "COMT (timestamped comments) chunk", unknown: false)
        case "APPL": return .item(key: "aiff:APPL", category: .embedded, detail: "APPL application-specific data", unknown: false)
        case "MIDI": return .item(key: "aiff:MIDI", category: .content, detail: "MIDI data chunk", unknown: false)
        case "JUNK", "PAD ", "FLLR": return .filler
        default:
            let name = id.trimmingSuffixSpaces
            return .item(key: "aiff:chunk:\(name)", category: NameClassifier.category(of: name, otherwise: .content),
                         detail: "unknown \(name) chunk", unknown: true)
        }
    }
}
