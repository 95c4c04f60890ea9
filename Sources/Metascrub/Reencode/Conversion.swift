// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubFormats
import MetascrubNative

/// `--convert jpeg|png` (or `convert:` in the policy): which files (HEIC/HEIF/AVIF, JPEG XL, TIFF) are converted, and what their outputs are
/// called. The pixel work is `MetascrubNative`'s (`HEIFDecoder.render`, `JPEGEncoder`, `PNGEncoder`,
/// `Fidelity`); `ImageConverter` ties it to the pipeline.
public struct ConversionOptions: Sendable, Equatable {
    /// From the command line; overrides the policy's `convert:`.
    public var target: ConversionTarget?
    /// JPEG quality from `--quality`; otherwise `ImageConverter.qualityLadder`.
    public var quality: Int?

    public init(target: ConversionTarget? = nil, quality: Int? = nil) {
        self.target = target
        self.quality = quality
    }

    /// Source formats (by detected format id) a decoder exists for.
    public static let convertibleFormats: Set<String> = ["heif", "avif", "jxl", "tiff"]
    /// File name extensions of those formats, for finding output-name collisions before anything is read.
    static let convertibleExtensions: Set<String> = ["heic", "heif", "hif", "avif", "heics", "avifs", "jxl", "tif", "tiff"]

    /// `IMG_0001.HEIC` → `IMG_0001.jpg`: the extension of the last path component replaced (or added).
    public static func renamed(_ path: String, to target: ConversionTarget) -> String {
        let slash = path.lastIndex(of: "/").map { path.index(after: $0) } ?? path.startIndex
        let name = path[slash...]
        if let dot = name.lastIndex(of: "."), dot != name.startIndex {
            return String(path[..<dot]) + "." + target.fileExtension
        }
        return path + "." + target.fileExtension
    }

    /// The name a mirrored file will have, judged by its extension (used only to find clashes up front).
    static func mirroredName(_ relative: String, _ target: ConversionTarget?) -> String {
        guard let target else { return relative }
        let ext = relative.split(separator: "/").last.flatMap { name -> Substring? in
            guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
            return name[name.index(after: dot)...]
        }
        guard let ext, convertibleExtensions.contains(ext.lowercased()) else { return relative }
        return renamed(relative, to: target)
    }
}

extension ProcessingOptions {
    /// The conversion that applies to `source`, detected as `format`, if any.
    func conversionTarget(for format: String, source: any ByteSource) -> ConversionTarget? {
        guard let target = conversion.target ?? policy.convert, ConversionOptions.convertibleFormats.contains(format) else { return nil }
        // TIFF-based camera raws (NEF, ARW, PEF) share TIFF's detection: they are cleaned as raws, never converted.
        if format == "tiff", TIFFFormat.isCameraRaw(source) { return nil }
        return target
    }
}
