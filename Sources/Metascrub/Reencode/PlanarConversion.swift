// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubFormats
import MetascrubNative

extension ImageConverter {
    /// libheif's planar render of an 8-bit HEIF/AVIF image without alpha (`HEIFDecoder.renderPlanes`). Nil for
    /// anything else, and for any file libheif refuses: the interleaved path then decides (and reports) as before.
    func planarSource(_ source: any ByteSource, format: String) -> RGBPlanes? {
        guard format == "heif" || format == "avif", let bytes = try? source.readAll() else { return nil }
        return try? HEIFDecoder.renderPlanes(bytes: bytes)
    }

    /// HEIC/AVIF → JPEG from the planar render with the ladder (or `--quality`) and the figure of the
    /// interleaved path, holding no second full-size image: libjpeg is fed sixteen rows at a time and the check
    /// decodes eight rows at a time against the render (`RGBPlanes.jpeg`).
    func planarJPEG(_ render: RGBPlanes, icc: [UInt8]?, carried: CarriedMetadata, report: inout FileReport) throws -> ReencodedImage {
        let threshold = shared.threshold
        let ladder = options.conversion.quality.map { [JPEGEncoder.Settings(quality: $0, subsampling: .s420)] } ?? Self.qualityLadder
        let (settings, chosen) = try shared.firstPassing(ladder, report: &report) { settings in
            let (bytes, fidelity) = try render.jpeg(settings, iccProfile: icc, segments: carried.jpegSegments)
            return .init(bytes: bytes, fidelity: fidelity, passes: fidelity.meets(threshold))
        }
        let rule = options.conversion.quality != nil ? "--quality"
            : "quality ladder \(Self.qualityLadder.map { "\($0.quality)/\($0.subsampling.rawValue)" }.joined(separator: " → ")): first to reach \(Reencoding.decimal(threshold, 1)) dB"
        return ReencodedImage(bytes: chosen.bytes, format: ConversionTarget.jpeg.formatID, decoder: render.decoder,
                              encoder: JPEGEncoder.encoderName, settings: settings.summary + "; \(rule)", fidelity: chosen.fidelity)
    }
}
