// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// WAV (RIFF WAVE) and RF64/BW64: LIST/INFO (each subchunk an item), bext, iXML, _PMX (XMP), id3/ID3, cart,
/// DISP, axml and unknown chunks go per policy; JUNK/PAD filler goes; fmt, fact, data, cue, smpl, inst, plst,
/// chna and ds64 are kept byte for byte.
enum WAVFormat {
    static let structure: Set<String> = ["fmt ", "fact", "data", "cue ", "smpl", "inst", "plst", "chna", "ds64"]
    static let filler: Set<String> = ["JUNK", "junk", "PAD ", "pad ", "FLLR", "fllr"]

    static let audio = IFFAudio(format: "WAV", namespace: "riff", forms: ["WAVE"]) { id in
        if structure.contains(id) { return .structure }
        if filler.contains(id) { return .filler }
        switch id {
        case "LIST": return .list
        case "_PMX", "XMP ": return .xmp
        case "id3 ", "ID3 ": return .id3
        case "bext": return .item(key: "riff:bext", category: .identity, detail: "Broadcast Wave bext (originator, date, time, coding history)", unknown: false)
        case "iXML": return .item(key: "riff:iXML", category: .content, detail: "iXML production metadata (project, scene, take, notes)", unknown: false)
        case "axml": return .item(key: "riff:axml", category: .content, detail: "axml XML metadata", unknown: false)
        case "cart": return .item(key: "riff:cart", category: .identity, detail: "broadcast cart chunk (title, artist, client, dates)", unknown: false)
        case "DISP": return .item(key: "riff:DISP", category: .content, detail: "DISP display text or image", unknown: false)
        case "umid": return .item(key: "riff:umid", category: .device, detail: "SMPTE UMID (device and capture identifier)", unknown: false)
        default:
            let name = id.trimmingSuffixSpaces
            return .item(key: "riff:chunk:\(name)", category: NameClassifier.category(of: name, otherwise: .content),
                         detail: "unknown \(name) chunk", unknown: true)
        }
    }
}
