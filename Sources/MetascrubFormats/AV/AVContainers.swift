// SPDX-License-Identifier: GPL-3.0-or-later

/// The containers the libavformat path claims (only those no native handler claims: the registry lists the
/// native rows first), and which libavformat muxer writes each back.
enum AVContainers {
    struct Container: Sendable {
        var name: String
        var detect: @Sendable ([UInt8]) -> Bool
    }

    static let all: [Container] = [
        Container(name: "FLV") { Magic.ascii($0, "FLV") && $0.count > 3 && $0[3] == 1 },
        // A pack header; MPEG-1 and MPEG-2 program streams (MPG, VOB).
        Container(name: "MPEG-PS") { Magic.starts($0, [0x00, 0x00, 0x01, 0xBA]) },
        // The header partition pack key, after a run-in of up to 64 KB (only the first bytes are looked at).
        Container(name: "MXF") { head in
            let key: [UInt8] = [0x06, 0x0E, 0x2B, 0x34, 0x02, 0x05, 0x01, 0x01, 0x0D, 0x01, 0x02, 0x01, 0x01, 0x02]
            return (0...max(0, head.count - key.count)).contains { Magic.starts(head, key, at: $0) }
        },
        Container(name: "CAF") { Magic.ascii($0, "caff") },
        Container(name: "NUT") { Magic.ascii($0, "nut/multimedia container") },
        Container(name: "WavPack") { Magic.ascii($0, "wvpk") },
        Container(name: "Musepack") { Magic.ascii($0, "MPCK") || Magic.ascii($0, "MP+") },
        Container(name: "Monkey's Audio") { Magic.ascii($0, "MAC ") },
        Container(name: "True Audio") { Magic.ascii($0, "TTA1") },
        Container(name: "AMR") { Magic.ascii($0, "#!AMR") },
        Container(name: "Sun AU") { Magic.ascii($0, ".snd") },
        Container(name: "RealMedia") { Magic.ascii($0, ".RMF") },
    ]

    static func detect(_ head: [UInt8]) -> Bool { all.contains { $0.detect(head) } }

    /// The muxer that writes a file of the demuxer's format back; nil when libavformat can read the format but
    /// not write it (Musepack, Monkey's Audio): such files are refused with the items named, never passed.
    static func muxer(demuxer: String, head: [UInt8]) -> String? {
        switch demuxer {
        case "mpeg":
            // The pack header says MPEG-1 ('0010' marker) or MPEG-2 ('01' marker) system stream.
            return head.count > 4 && head[4] & 0xC0 == 0x40 ? "vob" : "mpeg"
        case "flv", "mxf", "caf", "nut", "wv", "tta", "amr", "au", "rm": return demuxer
        default: return nil
        }
    }

    /// Containers libavformat reads but has no muxer for.
    static let readOnly: Set<String> = ["Musepack", "Monkey's Audio"]

    /// For `metascrub formats`: which containers go which way.
    static let summary = """
        libavformat (FFmpeg, loaded on first use) cleans by stream copy: \(all.map(\.name).filter { !readOnly.contains($0) }.joined(separator: ", ")).
        It reads \(readOnly.sorted().joined(separator: " and ")) but cannot write them: such files are refused when the policy removes something.
        Native handlers stay first (byte-exact, streaming): MP4/MOV/3GP/3G2, Matroska/WebM/MKA, AVI, MPEG-TS/M2TS,
        ASF/WMV, WAV, AIFF, FLAC, Ogg, MP3.
        """
}
