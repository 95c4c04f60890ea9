// SPDX-License-Identifier: GPL-3.0-or-later

/// A web format that HEIC/HEIF/AVIF (and other formats with a decoder) are converted to while cleaning
/// (`--convert`, or `convert:` in a policy). Always a re-encode: the report says so, with its fidelity.
public enum ConversionTarget: String, Sendable, Codable, CaseIterable {
    case jpeg, png

    /// The extension the output gets in --output-dir runs: `IMG_0001.HEIC` → `IMG_0001.jpg`.
    public var fileExtension: String {
        switch self {
        case .jpeg: "jpg"
        case .png: "png"
        }
    }

    /// The format id the output is detected as.
    public var formatID: String { rawValue }
}

extension Policy {
    /// Default lowest PSNR (dB) a re-encoded image may have against the source's displayed render.
    public static let defaultMinimumPSNR = 40.0
}
