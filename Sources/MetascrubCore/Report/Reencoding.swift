// SPDX-License-Identifier: GPL-3.0-or-later

/// What a re-encode did, for every report format: why remuxing could not do it, how the pixels were decoded
/// and encoded, and how close the result is to the source's displayed render.
public struct Reencoding: Sendable, Codable, Equatable {
    /// What forced the re-encode: `convert heif to jpeg (--convert)`, `orientation bake: size not whole MCUs`.
    public var reason: String
    /// Format ids before and after (the same for an in-format re-encode).
    public var from: String
    public var to: String
    /// Decoder and encoder, with versions: `libheif 1.15.1`, `libjpeg-turbo (TurboJPEG)`.
    public var decoder: String
    public var encoder: String
    /// Encoder settings: `quality 92, 4:2:0, accurate DCT`, and the rule that chose them.
    public var settings: String
    /// PSNR in dB against the source's displayed render; absent when the pixels are identical.
    public var psnr: Double?
    public var ssim: Double
    public var identical: Bool
    /// The policy's threshold the PSNR was held to.
    public var minimumPSNR: Double
    /// What the source held that the output does not carry (thumbnails, gain maps, depth maps).
    public var notCarried: [String]

    public init(reason: String, from: String, to: String, decoder: String, encoder: String, settings: String,
                psnr: Double?, ssim: Double, minimumPSNR: Double, notCarried: [String] = []) {
        self.reason = reason
        self.from = from
        self.to = to
        self.decoder = decoder
        self.encoder = encoder
        self.settings = settings
        self.psnr = psnr
        self.ssim = ssim
        self.identical = psnr == nil
        self.minimumPSNR = minimumPSNR
        self.notCarried = notCarried
    }

    /// One line for text reports: `heif → jpeg by libjpeg-turbo (quality 92, 4:2:0): PSNR 46.51 dB, SSIM 0.9912`.
    public var summary: String {
        let figure: String
        if let psnr {
            figure = "PSNR \(Self.decimal(psnr, 2)) dB (min \(Self.decimal(minimumPSNR, 1))), SSIM \(Self.decimal(ssim, 4))"
        } else {
            figure = "identical pixels"
        }
        return "\(from) → \(to) by \(encoder) (\(settings)), decoded by \(decoder): \(figure); because \(reason)"
    }

    public static func decimal(_ value: Double, _ digits: Int) -> String {
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let whole = Int((value * scale).rounded())
        let sign = whole < 0 ? "-" : ""
        let magnitude = abs(whole)
        let integer = magnitude / Int(scale)
        let fraction = String(magnitude % Int(scale))
        return "\(sign)\(integer)." + String(repeating: "0", count: digits - fraction.count) + fraction
    }

    enum CodingKeys: String, CodingKey {
        case reason, from, to, decoder, encoder, settings, psnr = "psnr_db", ssim, identical
        case minimumPSNR = "min_psnr_db", notCarried = "not_carried"
    }
}
