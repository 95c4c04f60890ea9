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

    public static func category(of name: String, otherwise fallback: Category) -> Category {
        let lower = name.lowercased()
        for (category, words) in rules where words.contains(where: { lower.contains($0) }) {
            return category
        }
        return fallback
    }
}
