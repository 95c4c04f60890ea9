// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubFormats
import MetascrubNative

extension ImageConverter {
    /// HEIC/AVIF → JPEG from libheif's planar render (`PlanarJPEG`) when the image is 8-bit without alpha, with
    /// the same ladder (or `--quality`) and the same fidelity figure as the interleaved path. Nil for anything
    /// else, and for any file libheif refuses or the planar encoder fails on: the interleaved path then decides
    /// (and reports) as before.
    func planarJPEG(_ source: FileByteSource, format: String, carried: CarriedMetadata, carryICC: Bool) -> PlanarJPEG.Conversion? {
        guard format == "heif" || format == "avif", let bytes = try? source.readAll() else { return nil }
        let ladder = options.conversion.quality.map { [JPEGEncoder.Settings(quality: $0, subsampling: .s420)] } ?? Self.qualityLadder
        return try? PlanarJPEG.convert(heif: bytes, ladder: ladder, minimumPSNR: options.policy.minimumPSNR,
                                       carryICC: carryICC, segments: carried.jpegSegments)
    }

    /// What the report says about the settings: the quality, and which rule chose it.
    func planarSettings(_ planar: PlanarJPEG.Conversion) -> String {
        let rule = options.conversion.quality != nil ? "--quality"
            : "quality ladder \(Self.qualityLadder.map { "\($0.quality)/\($0.subsampling.rawValue)" }.joined(separator: " → ")): first to reach \(Reencoding.decimal(options.policy.minimumPSNR, 1)) dB"
        return planar.attempt.settings.summary + "; \(rule)"
    }
}
