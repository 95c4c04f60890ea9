// SPDX-License-Identifier: GPL-3.0-or-later

/// Metadata families a format can carry, for the capability table (`metascrub formats`).
public enum MetadataFamily: String, Sendable, CaseIterable {
    case exif = "EXIF", xmp = "XMP", iptc = "IPTC", icc = "ICC", text = "Text/Comments"
    case embedded = "Embedded", trailer = "Trailer", tags = "Tags", timed = "Timed"
}

/// What metascrub can do with a family in a format, like exiv2's registry row.
public enum Access: String, Sendable {
    /// Found, reported and removed.
    case remove = "RW"
    /// Found and reported only.
    case read = "R"
    /// Not handled.
    case none = "-"
}

public struct Capabilities: Sendable {
    public var families: [MetadataFamily: Access]
    public init(_ families: [MetadataFamily: Access] = [:]) { self.families = families }
    public subscript(_ family: MetadataFamily) -> Access { families[family] ?? .none }
}
