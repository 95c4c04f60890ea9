// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubFormats
import MetascrubNative

/// Cleans a file by converting it (HEIC/HEIF/AVIF, JPEG XL → JPEG/PNG): decode the displayed image, encode it with only
/// what the policy keeps, then prove the result before anything is written: it parses, a re-scan finds nothing
/// the policy removes, and its decoded pixels are within the policy's PSNR of the source's displayed render.
///
/// JPEG quality rule (documented in `docs/reencode.md`): the first step of `qualityLadder` (92 at 4:2:0 up to
/// 100 at 4:4:4) whose decoded result reaches the policy's min-psnr, or exactly `--quality`. HEVC/AV1 photos
/// from phones and cameras reach 45–48 dB at the first step, at about the size of the camera's own JPEG.
struct ImageConverter {
    var options: ProcessingOptions

    /// Where the converted file goes: `--output FILE` as given; under `--output-dir` the mirrored name with
    /// the new extension. In place there is no sensible name (the original would be left beside it).
    static func target(for input: InputFile, mode: OutputMode, conversion: ConversionTarget) throws -> String {
        switch mode {
        case .file(let path):
            return path
        case .directory(let dir):
            return try OutputTarget.inside(dir, ConversionOptions.renamed(input.relative, to: conversion))
        case .inPlace:
            throw MetascrubError.unsupported(format: "path", reason: "--convert writes a file of another format: use --output or --output-dir; nothing was written")
        }
    }

    func convert(_ source: FileByteSource, handler: AnyFormatHandler, format: String, to conversion: ConversionTarget,
                 target: String, createFolders: Bool, report: inout FileReport) throws {
        let policy = options.policy
        let scan = try handler.scan(source, options: ScanOptions(includeValues: options.showValues))
        let findings = policy.evaluate(scan.items)
        report.findings = findings
        report.notes += scan.notes
        let forbidden = findings.filter { $0.disposition == .fail && $0.item.parent == nil }
        guard forbidden.isEmpty else {
            throw MetascrubError.policyViolation(keys: Array(Set(forbidden.map(\.item.key))).sorted())
        }

        let wantsCarry = Self.keepsCarriable(findings)
        var remux = wantsCarry && format != "jxl" ? try verifiedRemux(source, scan: scan) : nil
        var carried = wantsCarry ? self.carried(from: remux, format: format) : CarriedMetadata()
        // The profile describes the decoded pixels (libjxl describes its own output even without one in the
        // file), so it goes along unless the policy removes the source's profile.
        let removesICC = findings.contains { $0.item.key == "icc:profile" && $0.disposition != .keep }
        // Proven in memory first: nothing reaches the file system unless it passes.
        let (encoded, encoder, settings, fidelity): ([UInt8], String, String, Fidelity)
        let icc: [UInt8]?, decoderName: String
        if conversion == .jpeg, let planar = planarJPEG(source, format: format, carried: carried, carryICC: !removesICC) {
            // An 8-bit 4:2:0 HEIC: its YCbCr planes go to the JPEG encoder as they are (PlanarConversion.swift).
            guard planar.attempt.fidelity.meets(policy.minimumPSNR) else {
                throw tooFar(planar.attempt.fidelity, policy.minimumPSNR, report: &report)
            }
            (encoded, encoder, settings, fidelity) = (planar.attempt.bytes, JPEGEncoder.encoderName, planarSettings(planar), planar.attempt.fidelity)
            (icc, decoderName) = (planar.iccProfile, planar.decoder)
        } else {
            let decoded = try decode(source, format: format, scan: scan, remux: &remux, report: &report)
            if wantsCarry { carried = self.carried(from: remux, format: format) }
            icc = removesICC ? nil : decoded.iccProfile
            (encoded, encoder, settings, fidelity) = try encode(decoded, as: conversion, icc: icc, carried: carried, report: &report)
            decoderName = decoded.decoder
        }
        try rescan(encoded, as: conversion, fidelity: fidelity, report: &report)

        try AtomicWriter(fileSystem: options.fileSystem).replace(target, createFolders: createFolders, write: { sink in
            try sink.write(encoded)
        }, check: { temp in
            let written = try options.fileSystem.openOwnTemporary(temp)
            guard written.size == Int64(encoded.count), try written.readAll() == encoded else {
                throw MetascrubError.verificationFailed(reason: "the converted file on disk differs from what was verified")
            }
            try FileProcessor(options: options).applyAttributes(from: source, toTemp: temp)
        })

        let notCarried = Self.notCarried(findings)
        report.status = .cleaned
        report.method = .reencode
        report.output = target
        report.bytesAfter = Int64(encoded.count)
        if options.digests { report.sha256After = try Hashing.sha256(MemoryByteSource(encoded)) }
        report.reencode = Reencoding(
            reason: "convert \(format) to \(conversion.rawValue) (\(self.options.conversion.target != nil ? "--convert" : "policy convert"))",
            from: format, to: conversion.formatID, decoder: decoderName, encoder: encoder, settings: settings,
            psnr: fidelity.psnr, ssim: fidelity.ssim, minimumPSNR: policy.minimumPSNR, notCarried: notCarried)
        if !notCarried.isEmpty {
            report.notes.append(Note(.info, code: "reencode-not-carried",
                                     "not carried into the \(conversion.rawValue): \(notCarried.joined(separator: ", "))"))
        }
        report.findings = findings.map { finding in
            var f = finding
            if finding.item.key == "icc:profile", finding.disposition == .keep, icc != nil {
                f.outcome = .kept
            } else if Policy.orientationKeys.contains(finding.item.key), finding.disposition == .bake {
                f.outcome = .baked
            } else if finding.item.key == "heif:primary" {
                f.outcome = .kept
            } else if finding.disposition == .keep, !carried.isEmpty, finding.item.key.hasPrefix("exif:") || finding.item.key.hasPrefix("xmp:") {
                // Copied across in the Exif/XMP of the verified remux.
                f.outcome = .kept
            } else {
                // Everything else is gone: only pixels, the ICC profile and the remux's Exif/XMP are written.
                f.outcome = .removed
            }
            return f
        }
        if wantsCarry, carried.isEmpty {
            report.notes.append(Note(.warning, code: "reencode-kept-dropped",
                                     "items the policy keeps are not carried into files converted from \(format) (only Exif and XMP of HEIF/AVIF are)"))
        }
    }

    /// The source's displayed image. libheif refuses some files for their metadata items alone (an iPhone HEIC
    /// whose Exif item is "not correctly assigned"); those are decoded from the remuxed clean, whose coded image
    /// data is byte for byte the original's (the remux verification proves it).
    private func decode(_ source: FileByteSource, format: String, scan: FormatScan,
                        remux: inout [UInt8]?, report: inout FileReport) throws -> DecodedImage {
        let bytes = try source.readAll()
        if format == "jxl" { return try JXLDecoder.render(bytes: bytes) }
        do {
            return try HEIFDecoder.render(bytes: bytes)
        } catch let first {
            if remux == nil { remux = try verifiedRemux(source, scan: scan) }
            guard let remux, remux != bytes, let decoded = try? HEIFDecoder.render(bytes: remux) else { throw first }
            report.notes.append(Note(.info, code: "reencode-decoded-after-remux",
                                     "libheif could not read the original (\(FileProcessor.typed(first).description)); decoded from its verified remux without the metadata items"))
            return decoded
        }
    }

    /// The JPEG quality ladder: the first step whose decoded result reaches the policy's min-psnr is used.
    /// Most photos pass at the first step; small or synthetic images with sharp colour edges need more.
    static let qualityLadder: [JPEGEncoder.Settings] = [
        .init(quality: 92, subsampling: .s420), .init(quality: 95, subsampling: .s420),
        .init(quality: 95, subsampling: .s444), .init(quality: 98, subsampling: .s444),
        .init(quality: 100, subsampling: .s444),
    ]

    /// Encodes and measures against the source's render: JPEG by the quality ladder (or at `--quality` only),
    /// PNG losslessly. Throws (nothing is written) when no allowed setting reaches the policy's min-psnr.
    private func encode(_ decoded: DecodedImage, as conversion: ConversionTarget, icc: [UInt8]?, carried: CarriedMetadata,
                        report: inout FileReport) throws -> ([UInt8], String, String, Fidelity) {
        let threshold = options.policy.minimumPSNR
        switch conversion {
        case .jpeg:
            guard !decoded.raster.hasTransparency else {
                throw MetascrubError.unsupported(format: "JPEG", reason: "the image has transparent pixels, which JPEG cannot hold: use --convert png; nothing was written")
            }
            let ladder = options.conversion.quality.map { [JPEGEncoder.Settings(quality: $0, subsampling: decoded.chroma ?? .s420)] }
                ?? Self.qualityLadder
            var last: Fidelity?
            for settings in ladder {
                let bytes = try JPEGEncoder.encode(decoded.raster, settings: settings, iccProfile: icc, segments: carried.jpegSegments)
                let d = try LosslessJPEG.decodeRGB(bytes)
                let fidelity = try Fidelity.measure(decoded.raster, Raster(width: d.width, height: d.height, layout: .rgb, pixels: d.pixels))
                last = fidelity
                if fidelity.meets(threshold) {
                    let rule = options.conversion.quality != nil ? "--quality"
                        : "quality ladder \(Self.qualityLadder.map { "\($0.quality)/\($0.subsampling.rawValue)" }.joined(separator: " → ")): first to reach \(Reencoding.decimal(threshold, 1)) dB"
                    return (bytes, JPEGEncoder.encoderName, settings.summary + "; \(rule)", fidelity)
                }
            }
            throw tooFar(last, threshold, report: &report)
        case .png:
            let bytes = try PNGEncoder.encode(decoded.raster, iccProfile: icc, chunks: carried.pngChunks)
            let d = try PNGDecoder.decodeRGBA16(bytes)
            let raster = Raster(width: d.width, height: d.height, layout: .rgba, pixels: d.pixels.map { UInt8($0 >> 8) })
            let fidelity = try Fidelity.measure(decoded.raster, raster)
            // PNG is lossless: anything but identical pixels (alpha included) is a fault, whatever the threshold.
            let alphaKept = decoded.raster.layout != .rgba || raster.pixels == decoded.raster.pixels
            guard fidelity.identical, alphaKept else { throw tooFar(fidelity, threshold, report: &report) }
            return (bytes, PNGEncoder.encoderName, "lossless, 8-bit \(decoded.raster.layout == .rgba ? "RGBA" : "RGB")", fidelity)
        }
    }

    private func tooFar(_ fidelity: Fidelity?, _ threshold: Double, report: inout FileReport) -> MetascrubError {
        let figure = fidelity?.summary ?? "not measured"
        report.verification = Verification(rescan: .skipped, content: "decoded pixels against the source's displayed render: \(figure)",
                                           contentResult: .failed)
        return .verificationFailed(reason: "converted image too far from the original: \(figure), policy min-psnr \(Reencoding.decimal(threshold, 1)) dB")
    }

    /// Re-scans the encoded bytes with the output format's scanner and the policy. Throws (nothing is written)
    /// when they do not parse as the target format or still hold something the policy removes.
    private func rescan(_ bytes: [UInt8], as conversion: ConversionTarget, fidelity: Fidelity, report: inout FileReport) throws {
        guard let entry = FormatRegistry.detect(Array(bytes.prefix(Magic.headLength))), entry.format.id == conversion.formatID,
              let handler = entry.handler else {
            throw MetascrubError.verificationFailed(reason: "the converted file is not recognised as \(conversion.rawValue)")
        }
        let rescan: FormatScan
        do {
            rescan = try handler.scan(MemoryByteSource(bytes), options: ScanOptions())
        } catch {
            throw MetascrubError.verificationFailed(reason: "the converted file does not parse: \(FileProcessor.typed(error).description)")
        }
        let settled = try FileProcessor(options: options).decisions(rescan, MemoryByteSource(bytes))
        let remaining = Array(Set(settled.filter { $0.disposition != .keep }.map(\.item.key))).sorted()
        report.verification = Verification(
            rescan: remaining.isEmpty ? .passed : .failed, remaining: remaining,
            content: "decoded pixels against the source's displayed render: \(fidelity.summary)", contentResult: .passed)
        guard remaining.isEmpty else {
            throw MetascrubError.verificationFailed(reason: "still present after converting: \(remaining.joined(separator: ", "))")
        }
    }

    /// Secondary content of the source that a single-image output cannot hold.
    static func notCarried(_ findings: [Finding]) -> [String] {
        var out: [String] = []
        for finding in findings where finding.item.parent == nil {
            let key = finding.item.key
            let label: String?
            if key.contains("thumbnail") { label = "thumbnail" }
            else if key.hasPrefix("heif:auxiliary:depth") { label = "depth map" }
            else if key.hasPrefix("heif:auxiliary:gainmap") || key == "heif:tonemap" || key == "jxl:gainmap" { label = "gain map" }
            else if key == "jxl:jpeg-reconstruction" { label = "JPEG reconstruction data" }
            else if key.hasPrefix("heif:auxiliary:") { label = "auxiliary image" }
            else if key == "heif:motionphoto" { label = "motion-photo video" }
            else if key == "heif:image" { label = "secondary image" }
            else { label = nil }
            if let label, !out.contains(label) { out.append(label) }
        }
        return out
    }
}
