// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// Category of a metadata field from its name, for fields no family-specific rule covers (maker-note entries,
/// unknown XMP namespaces). Errs towards the more sensitive category.
public enum NameClassifier {
    private static let rules: [(Category, [String])] = [
        (.location, ["gps", "location", "latitude", "longitude", "altitude", "city", "country", "province", "state",
                     "sublocation", "iso6709", "geo", "place", "address"]),
        (.embedded, ["thumbnail", "preview", "jpgfromraw", "otherimage", "mpimage", "embeddedvideo", "motionphoto",
                     "trailer", "depthmap", "gainmap", "imagedata"]),
        (.identity, ["artist", "author", "creator", "copyright", "rights", "byline", "by-line", "credit", "contact",
                     "email", "owner", "person", "face", "region", "usercomment", "name"]),
        (.device, ["make", "model", "serial", "lens", "camera", "body", "device", "firmware", "uniqueid", "internal"]),
        (.time, ["date", "time", "offset"]),
        (.software, ["software", "tool", "encoder", "history", "agent", "version", "processing"]),
        (.content, ["title", "description", "comment", "keyword", "subject", "caption", "label", "headline",
                    "instructions", "text", "note"]),
    ]

    /// The rules' words as bytes: `String.contains` resolved to Foundation's `range(of:)` (CFString search),
    /// 6-8% of the CPU of a JPEG batch clean with maker notes (perf, issue 25 round 2). The names classified
    /// are tag names from the tables (ASCII), so a byte search finds what it found.
    private static let byteRules: [(Category, [[UInt8]])] = rules.map { ($0.0, $0.1.map { Array($0.utf8) }) }

    public static func category(of name: String, otherwise fallback: Category) -> Category {
        let lower = Array(name.lowercased().utf8)
        for (category, words) in byteRules where words.contains(where: { contains(lower, $0) }) {
            return category
        }
        return fallback
    }

    private static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard let first = needle.first, needle.count <= haystack.count else { return needle.isEmpty }
        for start in 0...(haystack.count - needle.count) where haystack[start] == first {
            if haystack[start..<start + needle.count].elementsEqual(needle) { return true }
        }
        return false
    }
}
