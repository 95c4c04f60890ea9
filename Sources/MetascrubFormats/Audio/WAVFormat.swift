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
        case "bext": return .known("riff:bext", .identity, "Broadcast Wave bext (originator, date, time, coding history)")
        case "iXML": return .known("riff:iXML", .content, "iXML production metadata (project, scene, take, notes)")
        case "axml": return .known("riff:axml", .content, "axml XML metadata")
        case "cart": return .known("riff:cart", .identity, "broadcast cart chunk (title, artist, client, dates)")
        case "DISP": return .known("riff:DISP", .content, "DISP display text or image")
        case "umid": return .known("riff:umid", .device, "SMPTE UMID (device and capture identifier)")
        default: return .unknown(id, namespace: "riff")
        }
    }
}
