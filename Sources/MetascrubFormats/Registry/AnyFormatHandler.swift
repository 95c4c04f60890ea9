// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// A format handler with its layout type erased, once, here. The pipeline holds these; the scan it gets back
/// carries the typed layout to the same handler for settling, cleaning and verifying, so nothing downstream
/// casts and a handler can never be given another format's scan.
public struct AnyFormatHandler: Sendable {
    private let handler: any FormatHandler

    public init(_ handler: some FormatHandler) { self.handler = handler }

    public func scan(_ input: any ByteSource, options: ScanOptions) throws -> FormatScan {
        try Self.scan(handler, input, options)
    }

    private static func scan<H: FormatHandler>(_ handler: H, _ input: any ByteSource, _ options: ScanOptions) throws -> FormatScan {
        FormatScan(TypedScan(handler: handler, scan: try handler.scan(input, options: options)))
    }
}

/// One file's scan as the pipeline sees it: items and notes, and the way back to the handler that made it.
public struct FormatScan: Sendable {
    private let scanned: any ScannedFile

    fileprivate init(_ scanned: any ScannedFile) { self.scanned = scanned }

    public var items: [MetadataItem] { scanned.items }
    public var notes: [Note] { scanned.notes }
    /// C2PA manifest stores found in the file, with their hard binding checked against it.
    public var provenance: [ProvenanceManifest] { scanned.provenance }

    /// The policy's decisions with those the handler cannot carry out losslessly turned into `keep`.
    /// Throws `inconsistent` when a handler's settle returns a different number of decisions than it was given:
    /// everything after (the plan, the residue proof, the report) pairs decision `i` with item `i`.
    public func settle(_ findings: [Finding], input: any ByteSource, policy: Policy) throws -> [Finding] {
        let settled = try scanned.settle(findings, input: input, policy: policy)
        guard settled.count == findings.count, findings.count == items.count else {
            throw MetascrubError.inconsistent(stage: "settling the policy's decisions", reason:
                "\(items.count) scanned items, \(findings.count) decisions given, \(settled.count) returned")
        }
        return settled
    }

    public func clean(_ input: any ByteSource, plan: CleanPlan, to output: any OutputSink) throws -> CleanResult {
        try scanned.clean(input, plan: plan, to: output)
    }

    /// The cleaned file scanned by the same handler, ready to have its content compared with this one's.
    /// `original`, the file this scan is of, lets the handler find what the clean copied unchanged faster.
    public func rescan(_ cleaned: any ByteSource, original: (any ByteSource)? = nil) throws -> FormatRescan {
        try scanned.rescan(cleaned, original: original)
    }

    func reencodable(_ input: any ByteSource, _ plan: CleanPlan) -> ReencodableBake? {
        scanned.reencodableBake(input: input, plan: plan)
    }
}

/// A cleaned file's scan, paired with the original's, as verification sees it.
public struct FormatRescan: Sendable {
    /// The cleaned file's own scan (its items, and decisions settled on it).
    public let scan: FormatScan
    private let pair: any ScannedPair

    fileprivate init(scan: FormatScan, pair: any ScannedPair) {
        self.scan = scan
        self.pair = pair
    }

    /// Compares the decoded or coded content of the cleaned file with the original's.
    public func verifyContent(original: any ByteSource, cleaned: any ByteSource, result: CleanResult) throws -> ContentCheck {
        try pair.verifyContent(original: original, cleaned: cleaned, result: result)
    }
}

private protocol ScannedFile: Sendable {
    var items: [MetadataItem] { get }
    var notes: [Note] { get }
    var provenance: [ProvenanceManifest] { get }
    func settle(_ findings: [Finding], input: any ByteSource, policy: Policy) throws -> [Finding]
    func clean(_ input: any ByteSource, plan: CleanPlan, to output: any OutputSink) throws -> CleanResult
    func rescan(_ cleaned: any ByteSource, original: (any ByteSource)?) throws -> FormatRescan
    func reencodableBake(input: any ByteSource, plan: CleanPlan) -> ReencodableBake?
}

private protocol ScannedPair: Sendable {
    func verifyContent(original: any ByteSource, cleaned: any ByteSource, result: CleanResult) throws -> ContentCheck
}

private struct TypedScan<H: FormatHandler>: ScannedFile {
    let handler: H
    let scan: ScanResult<H.Layout>

    var items: [MetadataItem] { scan.items }
    var notes: [Note] { scan.notes }
    var provenance: [ProvenanceManifest] { scan.provenance }

    func settle(_ findings: [Finding], input: any ByteSource, policy: Policy) throws -> [Finding] {
        // Embedded files settle their own items (an orientation their handler cannot bake, …) inside the parent's.
        // C2PA manifests come last: whether one stays depends on every other decision (`ProvenanceRule`).
        ProvenanceRule.settle(try scan.settleEmbedded(handler.settle(findings, input: input, scan: scan, policy: policy), policy: policy),
                              manifests: scan.provenance, policy: policy)
    }

    func clean(_ input: any ByteSource, plan: CleanPlan, to output: any OutputSink) throws -> CleanResult {
        try handler.clean(input, scan: scan, plan: plan, to: output)
    }

    func rescan(_ cleaned: any ByteSource, original: (any ByteSource)?) throws -> FormatRescan {
        let after = try original.map { try handler.rescan(cleaned, original: $0, before: scan) } ?? handler.scan(cleaned, options: ScanOptions())
        return FormatRescan(scan: FormatScan(TypedScan(handler: handler, scan: after)), pair: TypedPair(handler: handler, before: scan, after: after))
    }

    func reencodableBake(input: any ByteSource, plan: CleanPlan) -> ReencodableBake? {
        handler.reencodableBake(input: input, scan: scan, plan: plan)
    }
}

private struct TypedPair<H: FormatHandler>: ScannedPair {
    let handler: H
    let before: ScanResult<H.Layout>
    let after: ScanResult<H.Layout>

    func verifyContent(original: any ByteSource, cleaned: any ByteSource, result: CleanResult) throws -> ContentCheck {
        try handler.verifyContent(original: original, before.layout, cleaned: cleaned, after.layout, result: result)
    }
}
