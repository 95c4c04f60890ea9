// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubFormats
import MetascrubNative

extension ImageConverter {
    /// The JPEG qualities tried on the planar path, in order: all at 4:2:0, the source's own sampling, so
    /// the steps of `qualityLadder` that only change the sampling to 4:4:4 have nothing to add.
    static let planarQualities = [92, 95, 98, 100]

    /// HEIC → JPEG on the decoded YCbCr planes (`PlanarJPEG`) when the image qualifies: 8-bit HEVC 4:2:0,
    /// BT.601 full range, no crop, no alpha. Nil for anything else, and for any file libheif refuses or the
    /// planar encoder fails on: the RGB path then decides (and reports) as before.
    func planarJPEG(_ source: FileByteSource, format: String, carried: CarriedMetadata, carryICC: Bool) -> PlanarJPEG.Conversion? {
        guard format == "heif", let bytes = try? source.readAll() else { return nil }
        let qualities = options.conversion.quality.map { [$0] } ?? Self.planarQualities
        return try? PlanarJPEG.convert(heif: bytes, qualities: qualities, minimumPSNR: options.policy.minimumPSNR,
                                       carryICC: carryICC, segments: carried.jpegSegments)
    }

    /// What the report says about the settings: the quality, and which rule chose it.
    func planarSettings(_ planar: PlanarJPEG.Conversion) -> String {
        let rule = options.conversion.quality != nil ? "--quality"
            : "quality ladder \(Self.planarQualities.map(String.init).joined(separator: " → ")) at the source's 4:2:0: first to reach \(Reencoding.decimal(options.policy.minimumPSNR, 1)) dB"
        return planar.attempt.settings.summary + ", encoded from the decoded YCbCr planes; \(rule)"
    }
}
