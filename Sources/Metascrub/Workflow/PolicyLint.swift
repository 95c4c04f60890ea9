// SPDX-License-Identifier: GPL-3.0-or-later
import CExif
import MetascrubCore
import Yams

/// Warnings for a policy that loads but likely does not say what its author meant: under `default: keep`,
/// `exf:GPS*: remove` or `exif:GPSLatitud: remove` match nothing, and the position stays. A key rule whose
/// namespace metascrub never reports, or an EXIF rule that names no tag libexif knows, is reported with its line
/// and column and the nearest known name.
public enum PolicyLint {
    /// The namespaces reports use (the part of a key before its first `:`).
    public static let namespaces: Set<String> = [
        "aiff", "ape", "asf", "auxiliary", "av", "avi", "c2pa", "ctmd", "exif", "flac", "gif", "h264", "heif", "icc",
        "id3", "id3v1", "iptc", "j2k", "jfif", "jp2", "jpeg", "jumbf", "jxl", "lyrics3", "makernote", "matroska", "mp3",
        "mp4", "mpegts", "mpf", "ogg", "pdf", "photoshop", "png", "preview", "psd", "quicktime", "riff", "svg", "tiff",
        "vorbis", "webp", "xmp",
    ]

    /// EXIF tag names: libexif's table, the one `ExifTagNames` names reported items from.
    static let exifNames: Set<String> = {
        var names = Set<String>()
        for index in 0..<exif_tag_table_count() {
            if let name = exif_tag_table_get_name(index) { names.insert(String(cString: name)) }
        }
        return names
    }()

    /// `file:line:column: keys.KEY: what is wrong (did you mean …?)`, one per suspicious key rule.
    public static func warnings(yaml text: String, file: String) -> [String] {
        guard let root = try? Yams.compose(yaml: text, .basic), let top = root.mapping,
              let keys = top.first(where: { $0.key.string == "keys" })?.value.mapping else { return [] }
        var out: [String] = []
        for (keyNode, _) in keys {
            guard let key = keyNode.string, key != "*" else { continue }
            let place = "\(file):\(keyNode.mark.map { "\($0.line):\($0.column)" } ?? "?")"
            let parts = key.split(separator: ":", maxSplits: 1).map(String.init)
            let namespace = parts[0]
            if !namespace.contains("*"), !namespace.contains("?"), !namespaces.contains(namespace) {
                out.append("\(place): keys.\(key): no item is ever reported in namespace '\(namespace)'"
                    + hint(namespace, among: namespaces))
                continue
            }
            guard namespace == "exif", parts.count == 2, !parts[1].hasPrefix("0x") else { continue }
            let pattern = KeyPattern(parts[1])
            if !exifNames.contains(where: pattern.matches) {
                out.append("\(place): keys.\(key): no EXIF tag is named '\(parts[1])'"
                    + hint(parts[1].replacingOccurrences(of: "*", with: ""), among: exifNames))
            }
        }
        return out
    }

    /// " (did you mean 'x'?)" for the nearest name by edit distance, when it is near enough to be a typo.
    static func hint(_ word: String, among names: Set<String>) -> String {
        let scored = names.map { ($0, distance(word.lowercased(), $0.lowercased())) }
        guard let best = scored.min(by: { $0.1 < $1.1 || ($0.1 == $1.1 && $0.0 < $1.0) }),
              best.1 <= max(2, word.count / 3) else { return "" }
        return " (did you mean '\(best.0)'?)"
    }

    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + [Int](repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
