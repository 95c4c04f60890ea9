// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubFormats

/// The file names the pre-commit framework hands to metascrub (`files:` in .pre-commit-hooks.yaml). metascrub
/// itself detects formats by their bytes; the framework can only go by names, so every format in the registry
/// needs the extensions its files carry here, or its files are committed unchecked (a CR2 with its body serial
/// was). A test checks that every registry row has extensions and that the shipped hooks use this pattern.
public enum HookFilePattern {
    /// Extensions by registry format id.
    public static let extensions: [String: [String]] = [
        "jpeg": ["jpg", "jpeg", "jpe", "jfif"], "png": ["png", "apng"], "webp": ["webp"], "gif": ["gif"],
        "cr2": ["cr2"], "orf": ["orf"], "rw2": ["rw2"], "raf": ["raf"], "iiq": ["iiq"],
        "dng": ["dng", "nef", "nrw", "arw", "sr2", "srf", "pef"], "tiff": ["tif", "tiff"], "psd": ["psd", "psb"],
        "cr3": ["cr3"], "avif": ["avif"], "heif": ["heic", "heif", "hif"], "jxl": ["jxl"],
        "jp2": ["jp2", "jpx", "jpf", "jph", "j2k", "j2c", "jpc"], "svg": ["svg"],
        "mov": ["mov", "qt"], "mp4": ["mp4", "m4v", "m4a", "m4b", "3gp", "3g2"],
        "matroska": ["mkv", "mka", "mk3d", "webm"], "avi": ["avi"], "wav": ["wav"], "aiff": ["aif", "aiff", "aifc"],
        "flac": ["flac"], "ogg": ["ogg", "oga", "ogv", "opus", "spx"], "asf": ["asf", "wmv", "wma"],
        // Not `.ts`: that is TypeScript in most repositories.
        "mpegts": ["mts", "m2ts"], "mp3": ["mp3"],
        "pdf": ["pdf"],
        "avformat": ["flv", "mpg", "mpeg", "vob", "mxf", "caf", "nut", "wv", "tta", "ape", "mpc"], "bmp": ["bmp"],
    ]

    /// Registry rows without extensions here (empty when the two agree).
    public static var missing: [String] {
        FormatRegistry.entries.map(\.format.id).filter { extensions[$0]?.isEmpty ?? true }
    }

    /// Whether a file name has one of these extensions (any case).
    public static func isMediaName(_ path: String) -> Bool {
        guard let dot = path.lastIndex(of: "."), !path[dot...].contains("/") else { return false }
        return mediaExtensions.contains(path[path.index(after: dot)...].lowercased())
    }

    private static let mediaExtensions = Set(extensions.values.joined())

    /// The `files:` regular expression (Python syntax, case-insensitive).
    public static var regex: String {
        let all = Set(FormatRegistry.entries.flatMap { extensions[$0.format.id] ?? [] })
        return "(?i)\\.(" + all.sorted().joined(separator: "|") + ")$"
    }
}
