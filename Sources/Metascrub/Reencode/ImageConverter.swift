// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubFormats
import MetascrubNative

/// Cleans a file by converting it (HEIC/HEIF/AVIF, JPEG XL, TIFF → JPEG/PNG): decode the displayed image, encode it with only
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

    var shared: VerifiedReencode { VerifiedReencode(options: options, noun: "converted") }

    func convert(_ source: any ByteSource, handler: AnyFormatHandler, format: String, to conversion: ConversionTarget,
                 destination: any CleanDestination, report: inout FileReport) throws {
        // The settled decisions scan, clean and every re-scan share: `damaged:` is honoured, and what the
        // handler keeps because it is the picture (HEIF's primary image) is kept here too.
        let decide = Decide(policy: options.policy)
        let decision = try decide(source, handler: handler)
        report.record(decision, showValues: options.showValues)
        if let refusal = decide.refusal(decision) { throw refusal }
        let (scan, findings) = (decision.scan, decision.findings)

        let wantsCarry = Self.keepsCarriable(findings)
        var remux = wantsCarry && format != "jxl" ? try verifiedRemux(source, scan: scan, findings: findings) : nil
        // The profile describes the decoded pixels (libjxl describes its own output even without one in the
        // file), so it goes along unless the policy removes the source's profile; its text tags are blanked as the
        // policy says, whichever container it came from.
        let removesICC = findings.contains { $0.item.key == "icc:profile" && $0.disposition != .keep }
        // Proven in memory first: nothing reaches the file system unless it passes.
        let image: ReencodedImage, icc: [UInt8]?, carried: CarriedMetadata
        if conversion == .jpeg, let planar = planarSource(source, format: format) {
            // 8-bit HEIF/AVIF: libheif's planar render, encoded and checked a band at a time (PlanarConversion.swift).
            carried = wantsCarry ? self.carried(from: remux, format: format) : CarriedMetadata()
            icc = removesICC ? nil : planar.iccProfile.map { ICCProfileText.cleaned($0, policy: options.policy) }
            image = try planarJPEG(planar, icc: icc, carried: carried, report: &report)
        } else {
            let decoded = try decode(source, format: format, scan: scan, findings: findings, remux: &remux, report: &report)
            carried = wantsCarry ? self.carried(from: remux, format: format) : CarriedMetadata()
            icc = removesICC ? nil : decoded.iccProfile.map { ICCProfileText.cleaned($0, policy: options.policy) }
            image = try encode(decoded, as: conversion, icc: icc, carried: carried, report: &report)
            if format == "tiff", decoded.bitDepth > 8, conversion == .jpeg || decoded.wide == nil {
                let why = conversion == .jpeg ? "JPEG holds 8-bit samples" : "16-bit PNG output takes grey or RGB without alpha"
                report.notes.append(Note(.info, code: "reencode-depth-reduced", "\(decoded.bitDepth)-bit samples written as 8-bit: \(why)"))
            }
        }
        try Verifier(options: options).verify(reencoded: image, noun: shared.noun, original: source, scan: scan, findings: findings, report: &report)
        try shared.write(image, to: destination, report: &report)

        var notCarried = Self.notCarried(findings)
        // Further TIFF pages are images, not metadata items: only the first page is converted.
        if format == "tiff", case let pages = TIFFFormat.pageCount(source), pages > 1 {
            notCarried.append("\(pages - 1) further page\(pages == 2 ? "" : "s")")
        }
        report.status = .cleaned
        report.method = .reencode
        report.reencode = shared.reencoding(
            image, reason: "convert \(format) to \(conversion.rawValue) (\(options.conversion.target != nil ? "--convert" : "policy convert"))",
            from: format, notCarried: notCarried)
        if !notCarried.isEmpty {
            report.notes.append(Note(.info, code: "reencode-not-carried",
                                     "not carried into the \(conversion.rawValue): \(notCarried.joined(separator: ", "))"))
        }
        report.findings = findings.map { finding in
            var f = finding
            f.outcome = Self.outcome(finding, icc: icc, carried: carried)
            return f
        }.forReport(showValues: options.showValues)
        if wantsCarry, carried.isEmpty {
            report.notes.append(Note(.warning, code: "reencode-kept-dropped",
                                     "items the policy keeps are not carried into files converted from \(format) (only Exif and XMP of HEIF/AVIF and TIFF are)"))
        }
    }

    /// What happened to an item in a conversion: only pixels, the ICC profile and the remux's Exif/XMP are written.
    static func outcome(_ finding: Finding, icc: [UInt8]?, carried: CarriedMetadata) -> Outcome {
        let key = finding.item.key
        let tag = key.hasPrefix("exif:") || key.hasPrefix("xmp:")
        if key == "icc:profile", finding.disposition == .keep, icc != nil { return .kept }
        // The output's pixels are upright whatever the tag said: a bake the handler could only keep as a tag
        // (settled to keep with a reason) is done here.
        if Policy.orientationKeys.contains(key) {
            if finding.disposition == .bake || (finding.disposition == .keep && finding.reason != nil) { return .baked }
        } else if finding.disposition == .keep, finding.reason != nil || (finding.item.category == .structure && !tag) {
            // The picture itself (HEIF's primary image, kept by the policy's structure rule or by the handler's
            // settle): the output's pixels are it.
            return .kept
        }
        if finding.disposition == .keep, !carried.isEmpty, tag {
            // Copied across in the Exif/XMP of the verified remux.
            return .kept
        }
        return .removed
    }

    /// The source's displayed image. libheif refuses some files for their metadata items alone (an iPhone HEIC
    /// whose Exif item is "not correctly assigned"); those are decoded from the remuxed clean, whose coded image
    /// data is byte for byte the original's (the remux verification proves it).
    private func decode(_ source: any ByteSource, format: String, scan: FormatScan, findings: [Finding],
                        remux: inout [UInt8]?, report: inout FileReport) throws -> DecodedImage {
        let bytes = try source.readAll()
        if format == "jxl" { return try JXLDecoder.render(bytes: bytes) }
        if format == "tiff" { return try TIFFCodec.render(bytes: bytes) }
        do {
            return try HEIFDecoder.render(bytes: bytes)
        } catch let first {
            if remux == nil { remux = try verifiedRemux(source, scan: scan, findings: findings) }
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
                        report: inout FileReport) throws -> ReencodedImage {
        let threshold = shared.threshold
        switch conversion {
        case .jpeg:
            guard !decoded.raster.hasTransparency else {
                throw MetascrubError.unsupported(format: "JPEG", reason: "the image has transparent pixels, which JPEG cannot hold: use --convert png; nothing was written")
            }
            let ladder = options.conversion.quality.map { [JPEGEncoder.Settings(quality: $0, subsampling: decoded.chroma ?? .s420)] }
                ?? Self.qualityLadder
            let (settings, chosen) = try shared.firstPassing(ladder, report: &report) { settings in
                let bytes = try JPEGEncoder.encode(decoded.raster, settings: settings, iccProfile: icc, segments: carried.jpegSegments)
                let d = try LosslessJPEG.decodeRGB(bytes)
                let fidelity = try Fidelity.measure(decoded.raster, Raster(width: d.width, height: d.height, layout: .rgb, pixels: d.pixels))
                return .init(bytes: bytes, fidelity: fidelity, passes: fidelity.meets(threshold))
            }
            let rule = options.conversion.quality != nil ? "--quality"
                : "quality ladder \(Self.qualityLadder.map { "\($0.quality)/\($0.subsampling.rawValue)" }.joined(separator: " → ")): first to reach \(Reencoding.decimal(threshold, 1)) dB"
            return ReencodedImage(bytes: chosen.bytes, format: conversion.formatID, decoder: decoded.decoder, encoder: JPEGEncoder.encoderName,
                                  settings: settings.summary + "; \(rule)", fidelity: chosen.fidelity)
        case .png where decoded.wide != nil:
            let wide = decoded.wide!
            let (_, chosen) = try shared.firstPassing([()], report: &report) { _ in
                let bytes = try PNGEncoder.encode(wide, iccProfile: icc, chunks: carried.pngChunks)
                let back = try PNGDecoder.decodeRGBA16(bytes)
                // Lossless at 16 bits: the samples read back must be the source's, every one.
                let same = back.width == wide.width && back.height == wide.height && back.pixels == wide.rgba
                let fidelity = same ? Fidelity.identicalPixels
                    : try Fidelity.measure(decoded.raster, Raster(width: back.width, height: back.height, layout: .rgba, pixels: back.pixels.map { UInt8($0 >> 8) }))
                return .init(bytes: bytes, fidelity: fidelity, passes: same)
            }
            return ReencodedImage(bytes: chosen.bytes, format: conversion.formatID, decoder: decoded.decoder, encoder: PNGEncoder.encoderName,
                                  settings: "lossless, 16-bit \(wide.layout == .gray ? "grey" : "RGB")", fidelity: chosen.fidelity)
        case .png:
            let (_, chosen) = try shared.firstPassing([()], report: &report) { _ in
                let bytes = try PNGEncoder.encode(decoded.raster, iccProfile: icc, chunks: carried.pngChunks)
                let d = try PNGDecoder.decodeRGBA16(bytes)
                let raster = Raster(width: d.width, height: d.height, layout: .rgba, pixels: d.pixels.map { UInt8($0 >> 8) })
                let fidelity = try Fidelity.measure(decoded.raster, raster)
                // PNG is lossless: anything but identical pixels (alpha included) is a fault, whatever the threshold.
                let alphaKept = decoded.raster.layout != .rgba || raster.pixels == decoded.raster.pixels
                return .init(bytes: bytes, fidelity: fidelity, passes: fidelity.identical && alphaKept)
            }
            let layout = decoded.raster.layout == .rgba ? "RGBA" : decoded.raster.layout == .gray ? "grey" : "RGB"
            return ReencodedImage(bytes: chosen.bytes, format: conversion.formatID, decoder: decoded.decoder, encoder: PNGEncoder.encoderName,
                                  settings: "lossless, 8-bit \(layout)", fidelity: chosen.fidelity)
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
            else if key.hasPrefix("tiff:IFD") { label = "reduced-resolution image" }
            else if key == "tiff:SubIFD" { label = "SubIFD image" }
            else { label = nil }
            if let label, !out.contains(label) { out.append(label) }
        }
        return out
    }
}
