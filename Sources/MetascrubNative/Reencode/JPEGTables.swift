// SPDX-License-Identifier: GPL-3.0-or-later

/// What a JPEG's own coding says about how to re-encode it at a matching quality: the IJG quality its
/// luminance quantisation table corresponds to, and where its metadata segments end.
public enum JPEGTables {
    /// The IJG standard luminance table (ITU-T T.81 K.1), in zigzag order as DQT stores it.
    static let standardLuminance: [Int] = [
        16, 11, 12, 14, 12, 10, 16, 14, 13, 14, 18, 17, 16, 19, 24, 40, 26, 24, 22, 22, 24, 49, 35, 37, 29, 40, 58, 51,
        61, 60, 57, 51, 56, 55, 64, 72, 92, 78, 64, 68, 87, 69, 55, 56, 80, 109, 81, 87, 95, 98, 103, 104, 103, 62, 77,
        113, 121, 112, 100, 120, 92, 101, 103, 99,
    ]

    /// The IJG quality (1...100) whose scaled standard table is closest to table 0 of the first DQT segment,
    /// by inverting libjpeg's `jpeg_quality_scaling`. nil when there is no table 0.
    public static func estimatedQuality(_ jpeg: [UInt8]) -> Int? {
        guard let table = luminanceTable(jpeg) else { return nil }
        var sum = 0.0
        for i in 0..<64 { sum += Double(table[i]) * 100 / Double(standardLuminance[i]) }
        let scale = sum / 64
        let quality = scale <= 100 ? (200 - scale) / 2 : 5000 / scale
        return max(1, min(100, Int(quality.rounded())))
    }

    static func luminanceTable(_ jpeg: [UInt8]) -> [Int]? {
        var at = 2
        while at + 4 <= jpeg.count, jpeg[at] == 0xFF {
            let marker = jpeg[at + 1]
            let length = Int(jpeg[at + 2]) << 8 | Int(jpeg[at + 3])
            guard length >= 2, at + 2 + length <= jpeg.count else { return nil }
            if marker == 0xDA { return nil }
            if marker == 0xDB {
                var p = at + 4
                let end = at + 2 + length
                while p < end {
                    let precision = jpeg[p] >> 4, id = jpeg[p] & 0x0F
                    let size = precision == 0 ? 64 : 128
                    guard p + 1 + size <= end else { return nil }
                    if id == 0 {
                        return (0..<64).map { i in
                            precision == 0 ? Int(jpeg[p + 1 + i]) : Int(jpeg[p + 1 + 2 * i]) << 8 | Int(jpeg[p + 2 + 2 * i])
                        }
                    }
                    p += 1 + size
                }
            }
            at += 2 + length
        }
        return nil
    }

    /// The APPn and COM segments that follow SOI, up to the first table, frame or scan marker, as bytes.
    public static func leadingMetadata(_ jpeg: [UInt8]) -> [UInt8] {
        var at = 2
        while at + 4 <= jpeg.count, jpeg[at] == 0xFF, (0xE0...0xEF).contains(jpeg[at + 1]) || jpeg[at + 1] == 0xFE {
            let length = Int(jpeg[at + 2]) << 8 | Int(jpeg[at + 3])
            guard length >= 2, at + 2 + length <= jpeg.count else { break }
            at += 2 + length
        }
        return Array(jpeg[2..<at])
    }

    /// `segments` (APPn and COM, as `leadingMetadata` gives them) with every Adobe APP14 colour transform set to
    /// `transform` (1: YCbCr). A re-encode writes YCbCr; a source's transform 0 (RGB) carried over would make
    /// decoders read the new YCbCr samples as RGB.
    public static func settingAdobeTransform(_ segments: [UInt8], to transform: UInt8) -> [UInt8] {
        var out = segments
        var at = 0
        while at + 4 <= out.count, out[at] == 0xFF {
            let length = Int(out[at + 2]) << 8 | Int(out[at + 3])
            guard length >= 2, at + 2 + length <= out.count else { break }
            if out[at + 1] == 0xEE, length >= 14, Array(out[(at + 4)..<(at + 9)]) == Array("Adobe".utf8) { out[at + 15] = transform }
            at += 2 + length
        }
        return out
    }

    /// Everything after SOI and those leading segments: tables, frame, scans, EOI.
    public static func codedPart(_ jpeg: [UInt8]) -> [UInt8] {
        Array(jpeg[(2 + leadingMetadata(jpeg).count)...])
    }
}
