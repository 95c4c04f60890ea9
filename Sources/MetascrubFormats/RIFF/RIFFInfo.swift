// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// The one table of RIFF LIST/INFO subchunk ids (Microsoft's RIFF specification and the EXIF 2.x / DV
/// additions): the same `riff:INFO/ISRC` has the same category in AVI and WAV, so one policy treats it the same
/// in every container. Ids not listed are classified by name and marked unknown.
enum RIFFInfo {
    static let categories: [String: Category] = [
        // Who made, owns or supplied it (ISRC "Source" is the supplier of the original subject).
        "IART": .identity, "ICOP": .identity, "IENG": .identity, "ITCH": .identity, "ICMS": .identity, "ISRC": .identity,
        "IWRI": .identity, "IPRO": .identity, "IMUS": .identity, "ISTR": .identity, "IEDT": .identity, "ICNM": .identity,
        "IPDS": .identity, "IPUB": .identity,
        "ISFT": .software, "IENC": .software,
        "ICRD": .time, "IDIT": .time, "ISMP": .time, "IDAT": .time,
        "IARL": .location, "ICNT": .location, "ILOC": .location,
        // The recording equipment and medium.
        "IMED": .device, "IDEV": .device, "IMAK": .device, "IMOD": .device,
        // What it is about (ISRF "Source Form" is the original's medium: slide, paper, map).
        "ICMT": .content, "INAM": .content, "IPRD": .content, "IGNR": .content, "ITRK": .content, "IPRT": .content,
        "IKEY": .content, "ISBJ": .content, "ISRF": .content, "ILNG": .content,
    ]

    /// The category of a subchunk id, and whether the table knows it; `name` is the id as shown in keys.
    static func classify(_ id: String, name: String) -> (category: Category, unknown: Bool) {
        if let known = categories[id] { return (known, false) }
        return (NameClassifier.category(of: name, otherwise: .content), true)
    }
}
