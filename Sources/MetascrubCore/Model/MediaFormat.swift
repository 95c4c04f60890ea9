// SPDX-License-Identifier: GPL-3.0-or-later

/// A container format, identified by magic bytes (never by file name).
public struct MediaFormat: Sendable, Hashable, Codable, CustomStringConvertible {
    public enum Kind: String, Sendable, Codable { case image, video, audio, raw, document }

    /// Stable identifier used in reports: "jpeg", "png", "heif", "mp4".
    public var id: String
    /// Human name: "JPEG", "PNG".
    public var name: String
    public var kind: Kind

    public init(id: String, name: String, kind: Kind) {
        self.id = id
        self.name = name
        self.kind = kind
    }

    public var description: String { name }
}
