// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// MPEG-1/2/2.5 audio frame headers (ISO 11172-3, 13818-3) and the Xing/Info + LAME tag that encoders put in
/// the first frame (gabriel.mp3-tech.org/mp3infotag.html).
struct MPEGFrameHeader {
    var version: Int  // 1, 2, or 25 (MPEG 2.5)
    var layer: Int  // 1, 2, 3
    var protected: Bool
    var bitrate: Int  // kbit/s; 0 = free format
    var sampleRate: Int
    var padding: Bool
    var mono: Bool

    static let bitrates: [[Int]] = [
        [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448],  // MPEG-1 layer I
        [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],  // MPEG-1 layer II
        [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],  // MPEG-1 layer III
        [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256],  // MPEG-2/2.5 layer I
        [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],  // MPEG-2/2.5 layers II, III
    ]
    static let sampleRates: [Int: [Int]] = [1: [44100, 48000, 32000], 2: [22050, 24000, 16000], 25: [11025, 12000, 8000]]

    init?(_ b: [UInt8], at o: Int = 0) {
        guard o + 4 <= b.count, b[o] == 0xFF, b[o + 1] & 0xE0 == 0xE0 else { return nil }
        switch (b[o + 1] >> 3) & 3 {
        case 3: version = 1
        case 2: version = 2
        case 0: version = 25
        default: return nil
        }
        switch (b[o + 1] >> 1) & 3 {
        case 3: layer = 1
        case 2: layer = 2
        case 1: layer = 3
        default: return nil
        }
        protected = b[o + 1] & 1 == 0
        let bitrateIndex = Int(b[o + 2] >> 4), rateIndex = Int((b[o + 2] >> 2) & 3)
        guard bitrateIndex != 15, rateIndex != 3, let rates = Self.sampleRates[version] else { return nil }
        let table = version == 1 ? layer - 1 : (layer == 1 ? 3 : 4)
        bitrate = Self.bitrates[table][bitrateIndex]
        sampleRate = rates[rateIndex]
        padding = b[o + 2] & 2 != 0
        mono = b[o + 3] >> 6 == 3
    }

    /// Frame length in bytes, nil for free-format frames.
    var length: Int? {
        guard bitrate > 0 else { return nil }
        let pad = padding ? 1 : 0
        switch layer {
        case 1: return (12 * bitrate * 1000 / sampleRate + pad) * 4
        case 3 where version != 1: return 72 * bitrate * 1000 / sampleRate + pad
        default: return 144 * bitrate * 1000 / sampleRate + pad
        }
    }

    /// Offset of the Xing/Info tag: after the header, the optional CRC and the layer III side information.
    var sideInfoEnd: Int {
        let side = version == 1 ? (mono ? 17 : 32) : (mono ? 9 : 17)
        return 4 + (protected ? 2 : 0) + side
    }
}

/// The LAME extension of a Xing/Info tag: a 9-byte encoder version string, gapless and ReplayGain data,
/// and a CRC-16 over the frame's bytes before the CRC field.
struct LAMETag {
    /// Offset of the encoder string in the frame.
    var offset: Int
    /// Bytes 0..<offset+34 of the frame are covered by the CRC stored at offset+34.
    var crcOffset: Int { offset + 34 }

    /// Finds the LAME tag in the first frame (`frame` holds at least the frame's bytes).
    static func find(in frame: [UInt8], header: MPEGFrameHeader) -> LAMETag? {
        guard header.layer == 3 else { return nil }
        var at = header.sideInfoEnd
        guard at + 8 <= frame.count else { return nil }
        let magic = String(decoding: frame[at..<at + 4], as: UTF8.self)
        guard magic == "Xing" || magic == "Info" else { return nil }
        let flags = ByteOrder.big.u32(frame, at + 4)
        at += 8
        if flags & 1 != 0 { at += 4 }  // frame count
        if flags & 2 != 0 { at += 4 }  // byte count
        if flags & 4 != 0 { at += 100 }  // seek table of contents
        if flags & 8 != 0 { at += 4 }  // VBR quality
        guard at + 36 <= frame.count, let length = header.length, at + 36 <= length else { return nil }
        // The encoder string is printable ASCII (LAME, Lavf, Lavc, GOGO...), possibly padded with NULs.
        guard frame[at..<at + 4].allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return nil }
        return LAMETag(offset: at)
    }

    /// The 4-character family prefix decoders look for (ffmpeg reads gapless delays only after "LAME", "Lavf",
    /// "Lavc"), followed by the version characters that identify the exact encoder build.
    static let keptPrefix = 4

    /// Whether the version characters after the prefix are already blank.
    func isNeutral(_ frame: [UInt8]) -> Bool {
        frame[(offset + Self.keptPrefix)..<(offset + 9)].allSatisfy { $0 == 0x20 || $0 == 0 }
    }

    func encoder(_ frame: [UInt8]) -> String {
        String(decoding: frame[offset..<offset + 9], as: UTF8.self).trimmingSuffixSpaces
    }

    /// The frame's first bytes with the version blanked and the tag CRC recomputed (a CRC that was already
    /// wrong stays as it was, so a checker still sees the original damage).
    func neutralised(_ frame: [UInt8]) -> [UInt8] {
        var out = frame
        for i in (offset + Self.keptPrefix)..<(offset + 9) { out[i] = 0x20 }
        guard crcMatches(frame) else { return out }
        let crc = Self.crc16(out[0..<crcOffset])
        out[crcOffset] = UInt8(crc >> 8)
        out[crcOffset + 1] = UInt8(crc & 0xFF)
        return out
    }

    /// CRC-16 as LAME computes it (polynomial 0x8005 reflected, i.e. CRC-16/ARC, initial value 0).
    static func crc16(_ bytes: ArraySlice<UInt8>) -> UInt16 {
        var crc: UInt16 = 0
        for byte in bytes {
            crc ^= UInt16(byte)
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xA001 : crc >> 1 }
        }
        return crc
    }

    /// Whether the stored CRC matches the frame (if it does not, the cleaner leaves it as wrong as it was).
    func crcMatches(_ frame: [UInt8]) -> Bool {
        Self.crc16(frame[0..<crcOffset]) == UInt16(frame[crcOffset]) << 8 | UInt16(frame[crcOffset + 1])
    }
}
