// SPDX-License-Identifier: GPL-3.0-or-later

/// An item together with the policy's decision on it: the unit of every report.
public struct Finding: Sendable, Hashable, Codable {
    public var item: MetadataItem
    public var disposition: Disposition
    /// Which rule of the policy decided: `key exif:GPS*`, `category location`, `unknown`, `orientation`.
    public var rule: String
    public var outcome: Outcome
    /// Why the item is kept although the policy's rule would remove or bake it: the cleaner cannot carry that
    /// out for this file (an orientation that cannot be baked exactly, the primary image of a HEIF). Set by the
    /// format handler when it settles the policy's decisions, identically for scan and clean.
    public var reason: String?

    public init(item: MetadataItem, disposition: Disposition, rule: String, outcome: Outcome = .none, reason: String? = nil) {
        self.item = item
        self.disposition = disposition
        self.rule = rule
        self.outcome = outcome
        self.reason = reason
    }

    /// The policy's rule would remove or bake this item, but the handler keeps it for `reason`.
    public func keptInstead(because reason: String) -> Finding {
        var f = self
        f.disposition = .keep
        f.reason = reason
        return f
    }

    public var severity: Severity {
        switch disposition {
        case .keep: .info
        case .remove, .bake, .clean: .warning
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
