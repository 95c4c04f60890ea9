// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubFormats
import MetascrubNative

/// `orientation: bake` with `reencode: true`, for JPEGs no lossless DCT transform can turn exactly (sizes that
/// are not whole MCUs, rotations that decode differently). The container is first cleaned as usual with the
/// tag dropped (so everything else the policy keeps stays, byte for byte); then its pixels are decoded, turned
/// as the tag said, and encoded again at the source's chroma sampling and the quality its quantisation table
/// corresponds to (raised step by step only if the result misses the policy's min-psnr). Verified before it
/// is written: the re-scan finds nothing the policy removes and the decoded output is within min-psnr of the
/// original's displayed render.
struct OrientationReencoder {
    var options: ProcessingOptions

    typealias Need = ReencodableBake

    /// The re-encoded file and how it was made.
    struct Encoded {
        var bytes: [UInt8]
        var format: String
        var decoder: String
        var encoder: String
        var settings: String
        var fidelity: Fidelity
    }

    func clean(_ source: FileByteSource, scan: FormatScan, findings: [Finding], plan: CleanPlan,
               need: Need, target: String, createFolders: Bool, report: inout FileReport) throws {
        // 1. The usual remux with the tag dropped instead of baked.
        var remuxPlan = plan
        remuxPlan.findings[need.item].disposition = .remove
        let sink = MemoryOutputSink()
        var result = try scan.clean(source, plan: remuxPlan, to: sink)
        let remuxed = sink.bytes

        // 2–3. The original's displayed render, encoded again and measured against it.
        let chosen: Encoded
        switch need.coding {
        case .jpeg: chosen = try reencodeJPEG(remuxed, need, report: &report)
        case .webp(let lossless): chosen = try reencodeWebP(remuxed, need, lossless: lossless, report: &report)
        case .tiff: chosen = try reencodeTIFF(remuxed, need, report: &report)
        }

        // 4. Re-scan with the policy (settled as every verification is).
        let processor = FileProcessor(options: options)
        let output = MemoryByteSource(chosen.bytes)
        let rescan: FormatRescan
        do {
            rescan = try scan.rescan(output)
        } catch {
            throw MetascrubError.verificationFailed(reason: "the re-encoded file does not parse: \(FileProcessor.typed(error).description)")
        }
        let remaining = try processor.remaining(rescan, output)
        report.verification = Verification(
            rescan: remaining.isEmpty ? .passed : .failed, remaining: remaining,
            content: "decoded pixels against the original's displayed render: \(chosen.fidelity.summary)", contentResult: .passed)
        guard remaining.isEmpty else {
            throw MetascrubError.verificationFailed(reason: "still present after re-encoding: \(remaining.joined(separator: ", "))")
        }

        // 5. Written atomically, like every clean.
        try AtomicWriter(fileSystem: options.fileSystem).replace(target, createFolders: createFolders, write: { sink in
            try sink.write(chosen.bytes)
        }, check: { temp in
            let written = try options.fileSystem.openOwnTemporary(temp)
            guard written.size == Int64(chosen.bytes.count), try written.readAll() == chosen.bytes else {
                throw MetascrubError.verificationFailed(reason: "the re-encoded file on disk differs from what was verified")
            }
            try processor.applyAttributes(from: source, toTemp: temp)
        })

        result.method = .reencode
        result.outcomes[need.item] = .baked
        result.notes.append(Note(.info, code: "orientation-reencoded",
                                 "orientation \(need.orientation) baked by re-encoding (reencode: true): \(need.reason)"))
        processor.record(result, findings: findings, output: target, report: &report)
        report.bytesAfter = Int64(chosen.bytes.count)
        if options.digests { report.sha256After = try Hashing.sha256(output) }
        report.reencode = Reencoding(
            reason: "orientation bake: \(need.reason)", from: chosen.format, to: chosen.format, decoder: chosen.decoder,
            encoder: chosen.encoder, settings: chosen.settings,
            psnr: chosen.fidelity.psnr, ssim: chosen.fidelity.ssim, minimumPSNR: options.policy.minimumPSNR)
    }

    /// JPEG: the source's sampling and the IJG quality its luminance table matches, climbing (then to 4:4:4)
    /// only until the result reaches min-psnr.
    private func reencodeJPEG(_ remuxed: [UInt8], _ need: Need, report: inout FileReport) throws -> Encoded {
        let decoded = try LosslessJPEG.decodeRGB(remuxed)
        let turned = PixelOrientation.apply(need.orientation, width: decoded.width, height: decoded.height, pixels: decoded.pixels, channels: 3)
        let header = try LosslessJPEG.header(remuxed)
        let chroma = Self.chroma(header.subsampling)
        var render = Raster(width: turned.width, height: turned.height, layout: .rgb, pixels: turned.pixels)
        if chroma == .gray { render = Raster(width: render.width, height: render.height, layout: .gray, pixels: stride(from: 0, to: render.pixels.count, by: 3).map { render.pixels[$0] }) }

        let threshold = options.policy.minimumPSNR
        let matched = JPEGTables.estimatedQuality(remuxed) ?? 92
        // Rotating subsampled chroma moves it off its sampling grid; full chroma is the last resort.
        var ladder = Array(Set([matched, min(100, matched + 3), min(100, matched + 6), 100])).sorted()
            .map { JPEGEncoder.Settings(quality: $0, subsampling: chroma) }
        if chroma != .s444, chroma != .gray { ladder += [.init(quality: max(matched, 95), subsampling: .s444), .init(quality: 100, subsampling: .s444)] }
        var chosen: (bytes: [UInt8], settings: JPEGEncoder.Settings, fidelity: Fidelity)?
        var last: Fidelity?
        let lead: [UInt8] = [0xFF, 0xD8] + JPEGTables.leadingMetadata(remuxed)
        for settings in ladder {
            let encoded = try JPEGEncoder.encode(render, settings: settings)
            let bytes = lead + JPEGTables.codedPart(encoded)
            let back = try LosslessJPEG.decodeRGB(bytes)
            let fidelity = try Fidelity.measure(render, Raster(width: back.width, height: back.height, layout: .rgb, pixels: back.pixels))
            last = fidelity
            if fidelity.meets(threshold) { chosen = (bytes, settings, fidelity); break }
        }
        guard let chosen else { throw tooFar(last, threshold, report: &report) }
        let rule = chosen.settings.quality == matched && chosen.settings.subsampling == chroma
            ? "matched to the source's quantisation table (IJG quality \(matched)) and sampling"
            : "source's table matches IJG quality \(matched) at \(chroma.rawValue); raised to reach \(Reencoding.decimal(threshold, 1)) dB"
        return Encoded(bytes: chosen.bytes, format: "jpeg", decoder: "libjpeg-turbo (TurboJPEG)", encoder: JPEGEncoder.encoderName,
                       settings: chosen.settings.summary + "; " + rule, fidelity: chosen.fidelity)
    }

    /// WebP: lossless stays lossless (and must decode to identical pixels); lossy climbs 90, 95, 100 until the
    /// result reaches min-psnr (the source's VP8 quantiser is not read back), then lossless.
    private func reencodeWebP(_ remuxed: [UInt8], _ need: Need, lossless: Bool, report: inout FileReport) throws -> Encoded {
        let decoded = try WebPCodec.decodeRGBA(remuxed)
        let turned = PixelOrientation.apply(need.orientation, width: decoded.width, height: decoded.height, pixels: decoded.pixels, channels: 4)
        let render = Raster(width: turned.width, height: turned.height, layout: .rgba, pixels: turned.pixels)
        let threshold = options.policy.minimumPSNR
        var last: Fidelity?
        // Lossy WebP is always 4:2:0, and turned chroma leaves its grid: when no lossy quality is close enough,
        // a lossless VP8L of the render is (larger, but exactly the displayed image).
        for quality in lossless ? [nil] : [90, 95, 100, nil] as [Int?] {
            let encoded = try WebPCodec.encode(render, quality: quality)
            let bytes = try WebPCodec.replacingImage(in: remuxed, with: encoded, width: render.width, height: render.height)
            let back = try WebPCodec.decodeRGBA(bytes)
            let fidelity = try Fidelity.measure(render, back)
            last = fidelity
            let alphaSame = !lossless || back.pixels == render.pixels
            if quality == nil ? fidelity.identical && alphaSame : fidelity.meets(threshold) {
                return Encoded(bytes: bytes, format: "webp", decoder: WebPCodec.encoderName, encoder: WebPCodec.encoderName,
                               settings: quality.map { "lossy VP8, quality \($0); lowest of 90, 95, 100 to reach \(Reencoding.decimal(threshold, 1)) dB" }
                                   ?? (lossless ? "lossless VP8L (the source is lossless)"
                                       : "lossless VP8L: no lossy quality up to 100 reached \(Reencoding.decimal(threshold, 1)) dB"), fidelity: fidelity)
            }
        }
        throw tooFar(last, threshold, report: &report)
    }

    /// TIFF: the strips decoded with libtiff, turned, and coded again with the same compression, predictor,
    /// bit depth and samples. Those codings are lossless, so the output must decode to exactly the turned samples.
    private func reencodeTIFF(_ remuxed: [UInt8], _ need: Need, report: inout FileReport) throws -> Encoded {
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
        return Encoded(bytes: bytes, format: "tiff", decoder: TIFFCodec.libraryName, encoder: TIFFCodec.libraryName,
                       settings: Self.summary(coding) + "; lossless, decoded samples identical", fidelity: .identicalPixels)
    }

    /// "LZW, predictor 2, 3 × 8-bit samples".
    static func summary(_ c: TIFFCoding) -> String {
        let names = [1: "uncompressed", 5: "LZW", 8: "Deflate", 32946: "Deflate", 32773: "PackBits"]
        let compression = names[c.compression] ?? "compression \(c.compression)"
        return "\(compression)\(c.predictor > 1 ? ", predictor \(c.predictor)" : ""), \(c.samplesPerPixel) × \(c.bitsPerSample)-bit samples"
    }

    private func tooFar(_ last: Fidelity?, _ threshold: Double, report: inout FileReport) -> MetascrubError {
        report.verification = Verification(rescan: .skipped, content: "decoded pixels against the original's displayed render: \(last?.summary ?? "not measured")", contentResult: .failed)
        return .verificationFailed(reason: "re-encoded image too far from the original: \(last?.summary ?? "not measured"), policy min-psnr \(Reencoding.decimal(threshold, 1)) dB")
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
