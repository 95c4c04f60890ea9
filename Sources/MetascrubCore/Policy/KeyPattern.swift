// SPDX-License-Identifier: GPL-3.0-or-later

/// A key or a glob over keys: `exif:GPSLatitude`, `exif:GPS*`, `xmp:dc:*`, `*:Copyright`.
/// `*` matches any run of characters (including `:`), `?` one character. Matching is case-sensitive.
public struct KeyPattern: Sendable, Hashable, CustomStringConvertible {
    public let text: String
    private let isLiteral: Bool

    public init(_ text: String) {
        self.text = text
        self.isLiteral = !text.contains("*") && !text.contains("?")
    }

    public var description: String { text }

    /// Exact keys beat every glob; among globs, more literal characters win.
    public var specificity: Int {
        isLiteral ? Int.max : text.filter { $0 != "*" && $0 != "?" }.count
    }

    public func matches(_ key: String) -> Bool {
        if isLiteral { return key == text }
        return Self.glob(Array(text.utf8), Array(key.utf8))
    }

    private static func glob(_ pattern: [UInt8], _ text: [UInt8]) -> Bool {
        var p = 0, t = 0
        var star = -1, mark = 0
        while t < text.count {
            if p < pattern.count, pattern[p] == UInt8(ascii: "?") || pattern[p] == text[t] {
                p += 1; t += 1
            } else if p < pattern.count, pattern[p] == UInt8(ascii: "*") {
                star = p; mark = t; p += 1
            } else if star >= 0 {
                p = star + 1; mark += 1; t = mark
            } else {
                return false
            }
        }
        while p < pattern.count, pattern[p] == UInt8(ascii: "*") { p += 1 }
        return p == pattern.count
    }
}
