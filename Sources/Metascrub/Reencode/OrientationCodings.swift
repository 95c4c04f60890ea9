// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubFormats
import MetascrubNative

/// How each format's pixels are turned and encoded again for `OrientationReencoder`: decode the remux, turn
/// the pixels as the tag said (the original's displayed render), encode with the settings closest to the
/// source's, and measure.
extension OrientationReencoder {
    /// JPEG: first the source's own quantisation tables and sampling (transposed for the turns that swap the
    /// axes); when those miss min-psnr or the source is not an 8-bit YCbCr/greyscale Huffman JPEG, the ladder
    /// from the IJG quality its luminance table matches, climbing (then to 4:4:4) until the result reaches it.
    func reencodeJPEG(_ remuxed: [UInt8], _ need: Need, report: inout FileReport) throws -> ReencodedImage {
        let decoded = try LosslessJPEG.decodeRGB(remuxed)
        let turned = PixelOrientation.apply(need.orientation, width: decoded.width, height: decoded.height, pixels: decoded.pixels, channels: 3)
        let header = try LosslessJPEG.header(remuxed)
        let chroma = Self.chroma(header.subsampling)
        var render = Raster(width: turned.width, height: turned.height, layout: .rgb, pixels: turned.pixels)
        if chroma == .gray { render = Raster(width: render.width, height: render.height, layout: .gray, pixels: stride(from: 0, to: render.pixels.count, by: 3).map { render.pixels[$0] }) }

        let threshold = shared.threshold
        var kept = JPEGTables.leadingMetadata(remuxed)
        if render.layout == .rgb { kept = JPEGTables.settingAdobeTransform(kept, to: 1) }
        let lead: [UInt8] = [0xFF, 0xD8] + kept
        func attempt(_ encoded: [UInt8]) throws -> VerifiedReencode.Attempt {
            let bytes = lead + JPEGTables.codedPart(encoded)
            let back = try LosslessJPEG.decodeRGB(bytes)
            let fidelity = try Fidelity.measure(render, Raster(width: back.width, height: back.height, layout: .rgb, pixels: back.pixels))
            return .init(bytes: bytes, fidelity: fidelity, passes: fidelity.meets(threshold))
        }

        let sourceTables: String
        do {
            var coding = try JPEGSourceCoding.read(remuxed)
            if need.orientation >= 5 { coding = coding.transposedForTurn() }
            let result = try attempt(try coding.encode(render))
            let name = "source tables\(coding.transposed ? " (transposed)" : ""), \(coding.samplingSummary)"
            if result.passes {
                return ReencodedImage(bytes: result.bytes, format: "jpeg", decoder: "libjpeg-turbo (TurboJPEG)", encoder: JPEGSourceCoding.encoderName,
                                      settings: name + ", accurate DCT, optimised Huffman tables", fidelity: result.fidelity)
            }
            sourceTables = "\(name) reached \(result.fidelity.summary), under \(Reencoding.decimal(threshold, 1)) dB"
        } catch {
            sourceTables = "source tables not usable (\(error))"
        }

        let matched = JPEGTables.estimatedQuality(remuxed) ?? 92
        // Rotating subsampled chroma moves it off its sampling grid; full chroma is the last resort.
        var ladder = Array(Set([matched, min(100, matched + 3), min(100, matched + 6), 100])).sorted()
            .map { JPEGEncoder.Settings(quality: $0, subsampling: chroma) }
        if chroma != .s444, chroma != .gray { ladder += [.init(quality: max(matched, 95), subsampling: .s444), .init(quality: 100, subsampling: .s444)] }
        let (settings, chosen) = try shared.firstPassing(ladder, report: &report) { settings in
            try attempt(try JPEGEncoder.encode(render, settings: settings))
        }
        let rule = settings.quality == matched && settings.subsampling == chroma
            ? "matched to the source's quantisation table (IJG quality \(matched)) and sampling"
            : "source's table matches IJG quality \(matched) at \(chroma.rawValue); raised to reach \(Reencoding.decimal(threshold, 1)) dB"
        return ReencodedImage(bytes: chosen.bytes, format: "jpeg", decoder: "libjpeg-turbo (TurboJPEG)", encoder: JPEGEncoder.encoderName,
                              settings: settings.summary + "; " + rule + "; " + sourceTables, fidelity: chosen.fidelity)
    }

    /// WebP: lossless stays lossless (and must decode to identical pixels); lossy climbs 90, 95, 100 until the
    /// result reaches min-psnr (the source's VP8 quantiser is not read back), then lossless.
    func reencodeWebP(_ remuxed: [UInt8], _ need: Need, lossless: Bool, report: inout FileReport) throws -> ReencodedImage {
        let decoded = try WebPCodec.decodeRGBA(remuxed)
        let turned = PixelOrientation.apply(need.orientation, width: decoded.width, height: decoded.height, pixels: decoded.pixels, channels: 4)
        let render = Raster(width: turned.width, height: turned.height, layout: .rgba, pixels: turned.pixels)
        let threshold = shared.threshold
        // Lossy WebP is always 4:2:0, and turned chroma leaves its grid: when no lossy quality is close enough,
        // a lossless VP8L of the render is (larger, but exactly the displayed image).
        let qualities: [Int?] = lossless ? [nil] : [90, 95, 100, nil]
        let (quality, chosen) = try shared.firstPassing(qualities, report: &report) { quality in
            let encoded = try WebPCodec.encode(render, quality: quality)
            let bytes = try WebPCodec.replacingImage(in: remuxed, with: encoded, width: render.width, height: render.height)
            let back = try WebPCodec.decodeRGBA(bytes)
            let fidelity = try Fidelity.measure(render, back)
            let alphaSame = !lossless || back.pixels == render.pixels
            return .init(bytes: bytes, fidelity: fidelity, passes: quality == nil ? fidelity.identical && alphaSame : fidelity.meets(threshold))
        }
        let settings = quality.map { "lossy VP8, quality \($0); lowest of 90, 95, 100 to reach \(Reencoding.decimal(threshold, 1)) dB" }
            ?? (lossless ? "lossless VP8L (the source is lossless)"
                : "lossless VP8L: no lossy quality up to 100 reached \(Reencoding.decimal(threshold, 1)) dB")
        return ReencodedImage(bytes: chosen.bytes, format: "webp", decoder: WebPCodec.encoderName, encoder: WebPCodec.encoderName,
                              settings: settings, fidelity: chosen.fidelity)
    }

    /// TIFF: the strips decoded with libtiff, turned, and coded again with the same compression, predictor,
    /// bit depth and samples. Those codings are lossless, so the output must decode to exactly the turned samples.
    func reencodeTIFF(_ remuxed: [UInt8], _ need: Need, report: inout FileReport) throws -> ReencodedImage {
        let stored = try TIFFCodec.decodeSamples(remuxed)
        let turned = PixelOrientation.apply(need.orientation, width: stored.coding.width, height: stored.coding.height,
                                            pixels: stored.pixels, channels: stored.coding.bytesPerPixel)
        var coding = stored.coding
        (coding.width, coding.height) = (turned.width, turned.height)
        let render = TIFFSamples(coding: coding, pixels: turned.pixels)
        let bytes = try TIFFImageSplice.replacingImage(in: remuxed, with: try TIFFCodec.encode(render), transposed: need.orientation >= 5)
        let back = try TIFFCodec.decodeSamples(bytes)
        guard back.coding == coding, back.pixels == render.pixels else {
            report.verification = Verification(rescan: .skipped, content: "decoded samples against the original's turned samples: they differ",
                                               contentResult: .failed)
            throw MetascrubError.verificationFailed(reason: "the re-encoded TIFF does not decode to the original's turned samples")
        }
        return ReencodedImage(bytes: bytes, format: "tiff", decoder: TIFFCodec.libraryName, encoder: TIFFCodec.libraryName,
                              settings: Self.summary(coding) + "; lossless, decoded samples identical", fidelity: .identicalPixels)
    }

    /// "LZW, predictor 2, 3 × 8-bit samples".
    static func summary(_ c: TIFFCoding) -> String {
        let names = [1: "uncompressed", 5: "LZW", 8: "Deflate", 32946: "Deflate", 32773: "PackBits"]
        let compression = names[c.compression] ?? "compression \(c.compression)"
        return "\(compression)\(c.predictor > 1 ? ", predictor \(c.predictor)" : ""), \(c.samplesPerPixel) × \(c.bitsPerSample)-bit samples"
    }

    /// TurboJPEG's TJSAMP_* value as a sampling the encoder can reproduce (4:4:0 and 4:1:1 are encoded as 4:2:0).
    static func chroma(_ subsampling: Int32) -> ChromaSubsampling {
        switch subsampling {
        case 0: .s444
        case 1: .s422
        case 3: .gray
        default: .s420
        }
    }
}
