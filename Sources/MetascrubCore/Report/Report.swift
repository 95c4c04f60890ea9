// SPDX-License-Identifier: GPL-3.0-or-later

/// The audit report: what was found, what was done, how it was verified. `docs/report.schema.json` describes
/// its JSON form; bump `schemaVersion` on any incompatible change.
public struct Report: Sendable, Codable, Equatable {
    public static let schemaVersion = 1

    public struct Tool: Sendable, Codable, Equatable {
        public var name: String
        public var version: String
        public init(name: String = "metascrub", version: String) {
            self.name = name
            self.version = version
        }
    }

    public struct PolicyInfo: Sendable, Codable, Equatable {
        public var name: String
        public var digest: String
        public init(name: String, digest: String) {
            self.name = name
            self.digest = digest
        }
    }

    public enum Command: String, Sendable, Codable { case scan, clean }

    public var schemaVersion: Int
    public var tool: Tool
    public var command: Command
    public var policy: PolicyInfo
    public var files: [FileReport]
    public var summary: Summary

    public init(tool: Tool, command: Command, policy: PolicyInfo, files: [FileReport]) {
        self.schemaVersion = Self.schemaVersion
        self.tool = tool
        self.command = command
        self.policy = policy
        self.files = files
        self.summary = Summary(files)
    }

    enum CodingKeys: String, CodingKey {
        case schemaVersion = "schema_version", tool, command, policy, files, summary
    }
}

public enum FileStatus: String, Sendable, Codable, CaseIterable {
    /// Nothing the policy removes was found.
    case clean
    /// A cleaned copy was written and verified.
    case cleaned
    /// Scan only: items the policy removes or forbids are present.
    case findings
    /// Not a media file, or a media format the tool cannot handle (see `reason`).
    case skipped
    /// The file could not be read or cleaned; nothing was written for it.
    case error
}

public enum CleanMethod: String, Sendable, Codable {
    /// The container was rewritten without the removed items; coded image/sample data copied byte for byte.
    case remux
    /// Orientation was baked by a lossless transform of the coded data (e.g. DCT-domain rotation).
    case losslessTransform = "lossless-transform"
    /// Pixels were decoded and encoded again (only when the policy allows it).
    case reencode
    /// Nothing had to change; the file was copied as it was.
    case copy
}

public struct Verification: Sendable, Codable, Equatable {
    public enum Result: String, Sendable, Codable { case passed, failed, skipped }
    /// The output was scanned again with the same policy.
    public var rescan: Result
    /// Keys still found that the policy removes (empty when passed).
    public var remaining: [String]
    /// How the image or sample data was compared with the original.
    public var content: String
    public var contentResult: Result

    public init(rescan: Result, remaining: [String] = [], content: String, contentResult: Result) {
        self.rescan = rescan
        self.remaining = remaining
        self.content = content
        self.contentResult = contentResult
    }

    enum CodingKeys: String, CodingKey {
        case rescan, remaining, content, contentResult = "content_result"
    }
}

public struct ErrorInfo: Sendable, Codable, Equatable {
    public var code: String
    public var message: String
    public var offset: Int64?

    public init(_ error: MetascrubError) {
        self.code = error.code
        self.message = error.description
        self.offset = error.offset
    }

    public init(code: String, message: String, offset: Int64? = nil) {
        self.code = code
        self.message = message
        self.offset = offset
    }
}

public struct FileReport: Sendable, Codable, Equatable {
    public var path: String
    public var output: String?
    public var format: String?
    public var status: FileStatus
    /// Why a file was skipped: `not-media`, `unsupported: …`.
    public var reason: String?
    public var method: CleanMethod?
    public var bytesBefore: Int64?
    public var bytesAfter: Int64?
    public var sha256Before: String?
    public var sha256After: String?
    public var findings: [Finding]
    public var notes: [Note]
    public var verification: Verification?
    /// Present when the output was re-encoded (method `reencode`).
    public var reencode: Reencoding?
    /// C2PA manifests found in the file (Content Credentials), with their binding before and after the clean.
    public var manifests: [ManifestReport]?
    public var error: ErrorInfo?

    public init(path: String, status: FileStatus) {
        self.path = path
        self.status = status
        self.findings = []
        self.notes = []
    }

    enum CodingKeys: String, CodingKey {
        case path, output, format, status, reason, method
        case bytesBefore = "bytes_before", bytesAfter = "bytes_after"
        case sha256Before = "sha256_before", sha256After = "sha256_after"
        case findings, notes, verification, reencode, manifests, error
    }

    /// Findings the policy removes, bakes or forbids: what makes a scan exit 1.
    public var actionable: [Finding] { findings.filter { $0.disposition != .keep } }

    /// The findings removed (clean) or to remove (scan): those at the top, and those inside an embedded file that
    /// is itself kept and cleaned. Items of a removed cover went with it and are not counted again.
    public var removedFindings: [Finding] {
        // Walked by index: copying each finding (its item's strings) on the way up was a visible part of a batch's
        // summary (issue 25, round 3).
        findings.indices.filter { index in
            guard findings[index].counts else { return false }
            var at = index
            while let parent = findings[at].item.parent, findings.indices.contains(parent) {
                at = parent
                if findings[at].counts { return false }
            }
            return true
        }.map { findings[$0] }
    }
}

public struct Summary: Sendable, Codable, Equatable {
    public var files: Int
    public var byStatus: [String: Int]
    /// Items removed (clean) or to remove (scan), per category, including those inside kept embedded files.
    public var removedByCategory: [String: Int]
    public var failed: Int

    public init(_ files: [FileReport]) {
        self.files = files.count
        var status: [String: Int] = [:]
        var categories: [String: Int] = [:]
        for file in files {
            status[file.status.rawValue, default: 0] += 1
            guard file.status != .error else { continue }
            for finding in file.removedFindings {
                categories[finding.item.category.rawValue, default: 0] += 1
            }
        }
        self.byStatus = status
        self.removedByCategory = categories
        self.failed = status[FileStatus.error.rawValue] ?? 0
    }

    enum CodingKeys: String, CodingKey {
        case files, byStatus = "by_status", removedByCategory = "removed_by_category", failed
    }
}

extension Finding {
    /// Whether the item is (scan: would be) removed or baked; an orientation kept as a fallback is not.
    var counts: Bool {
        switch outcome {
        case .none: !disposition.survives
        case .removed, .baked: true
        case .kept, .keptAsFallback, .cleaned: false
        }
    }

    enum CodingKeys: String, CodingKey {
        case key, category, location, offset, length, value, detail, unknown, parent
        case embeddedFormat = "embedded_format"
        case action, rule, outcome, severity, reason
    }

    // Flattened so a finding reads as one record in JSON.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(item.key, forKey: .key)
        try c.encode(item.category, forKey: .category)
        try c.encode(item.location, forKey: .location)
        try c.encodeIfPresent(item.offset, forKey: .offset)
        try c.encodeIfPresent(item.length, forKey: .length)
        try c.encodeIfPresent(item.value, forKey: .value)
        try c.encodeIfPresent(item.detail, forKey: .detail)
        if item.isUnknown { try c.encode(true, forKey: .unknown) }
        try c.encodeIfPresent(item.parent, forKey: .parent)
        try c.encodeIfPresent(item.embeddedFormat, forKey: .embeddedFormat)
        try c.encode(disposition, forKey: .action)
        try c.encode(rule, forKey: .rule)
        try c.encode(outcome, forKey: .outcome)
        try c.encode(severity, forKey: .severity)
        try c.encodeIfPresent(reason, forKey: .reason)
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        var item = MetadataItem(
            key: try c.decode(String.self, forKey: .key),
            category: try c.decode(Category.self, forKey: .category),
            location: try c.decode(String.self, forKey: .location),
            offset: try c.decodeIfPresent(Int64.self, forKey: .offset),
            length: try c.decodeIfPresent(Int64.self, forKey: .length),
            value: try c.decodeIfPresent(String.self, forKey: .value),
            detail: try c.decodeIfPresent(String.self, forKey: .detail),
            isUnknown: try c.decodeIfPresent(Bool.self, forKey: .unknown) ?? false,
            parent: try c.decodeIfPresent(Int.self, forKey: .parent))
        item.embeddedFormat = try c.decodeIfPresent(String.self, forKey: .embeddedFormat)
        self.init(
            item: item, disposition: try c.decode(Disposition.self, forKey: .action),
            rule: try c.decode(String.self, forKey: .rule), outcome: try c.decode(Outcome.self, forKey: .outcome),
            reason: try c.decodeIfPresent(String.self, forKey: .reason))
    }
}
