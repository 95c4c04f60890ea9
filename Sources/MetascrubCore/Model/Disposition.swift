// SPDX-License-Identifier: GPL-3.0-or-later

/// What the policy says to do with an item.
public enum Disposition: String, Sendable, Codable, CaseIterable {
    case keep
    case remove
    /// The item must not be there: scanning reports a violation, cleaning refuses the file.
    case fail
    /// Orientation only: apply it to the pixels (losslessly) and drop the tag.
    case bake
    /// Embedded files only (cover art, an image after the end of another, a smart object): keep the file, cleaned
    /// by its own format handler under the same policy. An embedded item metascrub cannot clean goes (or fails,
    /// per the policy's `uncleanable`).
    case clean

    /// Whether the item would still be in a cleaned file (an embedded file that is cleaned stays).
    public var survives: Bool { self == .keep || self == .clean }
}

/// What cleaning actually did with an item.
public enum Outcome: String, Sendable, Codable {
    case kept
    case removed
    case baked
    /// An embedded file kept and cleaned inside by its own format handler.
    case cleaned
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
