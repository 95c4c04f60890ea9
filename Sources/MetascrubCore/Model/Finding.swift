// SPDX-License-Identifier: GPL-3.0-or-later

/// An item together with the policy's decision on it: the unit of every report.
public struct Finding: Sendable, Hashable, Codable {
    public var item: MetadataItem
    public var disposition: Disposition
    /// Which rule of the policy decided: `key exif:GPS*`, `category location`, `unknown`, `orientation`.
    public var rule: String
    public var outcome: Outcome

    public init(item: MetadataItem, disposition: Disposition, rule: String, outcome: Outcome = .none) {
        self.item = item
        self.disposition = disposition
        self.rule = rule
        self.outcome = outcome
    }

    public var severity: Severity {
        switch disposition {
        case .keep: .info
        case .remove, .bake: .warning
        case .fail: .error
        }
    }
}

/// A diagnostic about a file that is not a metadata item: "orientation kept because the size is not whole MCUs",
/// "bytes after the end of the image". Data, never a log line.
public struct Note: Sendable, Hashable, Codable {
    public var severity: Severity
    /// Stable identifier, e.g. `orientation-fallback`, `crc-mismatch`.
    public var code: String
    public var message: String
    public var offset: Int64?

    public init(_ severity: Severity, code: String, _ message: String, offset: Int64? = nil) {
        self.severity = severity
        self.code = code
        self.message = message
        self.offset = offset
    }
}
