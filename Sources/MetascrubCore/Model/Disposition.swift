// SPDX-License-Identifier: GPL-3.0-or-later

/// What the policy says to do with an item.
public enum Disposition: String, Sendable, Codable, CaseIterable {
    case keep
    case remove
    /// The item must not be there: scanning reports a violation, cleaning refuses the file.
    case fail
    /// Orientation only: apply it to the pixels (losslessly) and drop the tag.
    case bake

    /// Whether the item would still be in a cleaned file.
    public var survives: Bool { self == .keep }
}

/// What cleaning actually did with an item.
public enum Outcome: String, Sendable, Codable {
    case kept
    case removed
    case baked
    /// The policy asked to bake orientation but that was impossible losslessly: a minimal tag was kept.
    case keptAsFallback = "kept-as-fallback"
    /// Scan only: nothing was done.
    case none
}

/// How serious a finding or note is; maps onto SARIF levels.
public enum Severity: String, Sendable, Codable, Comparable, CaseIterable {
    case info, warning, error

    public static func < (lhs: Severity, rhs: Severity) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}
