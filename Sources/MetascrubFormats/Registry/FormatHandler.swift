// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// What a scanner hands to the pipeline: the items, notes, and its own parse of the file for the cleaner.
/// The layout is typed: only the handler that made it reads it (the pipeline sees a `FormatScan`).
public struct ScanResult<Layout: Sendable>: Sendable {
    public var items: [MetadataItem]
    public var notes: [Note]
    /// The handler's own description of the file (segment list, box tree).
    public var layout: Layout
    /// Files inside this one scanned by their own handlers (cover art, an image after the end of this one),
    /// whose items are among `items` as children of the file's item (`ItemCollector.embeddedFile`).
    public var embedded: [EmbeddedFile] = []
    /// C2PA manifest stores found in the file, with their hard binding checked against it.
    public var provenance: [ProvenanceManifest] = []

    public init(items: [MetadataItem] = [], notes: [Note] = [], layout: Layout, embedded: [EmbeddedFile] = [],
                provenance: [ProvenanceManifest] = []) {
        self.items = items
        self.notes = notes
        self.layout = layout
        self.embedded = embedded
        self.provenance = provenance
    }

    /// The same items and notes with another layout (a handler that hands a variant to another handler).
    public func with<Other>(layout: Other) -> ScanResult<Other> {
        ScanResult<Other>(items: items, notes: notes, layout: layout, embedded: embedded, provenance: provenance)
    }
}

public struct ScanOptions: Sendable {
    /// Capture values for `--show-values`; otherwise scanners do not even render them.
    public var includeValues: Bool
    /// A file cut or damaged where no metadata can sit is scanned up to the damage (a `damaged-input`
    /// note says where); when false it is refused as before.
    public var tolerateDamage: Bool
    /// How many files deep this scan is (0: the file itself; 1: its cover art; …), bounded by
    /// `EmbeddedFile.maxDepth`.
    public var depth: Int = 0
    public init(includeValues: Bool = false, tolerateDamage: Bool = true) {
        self.includeValues = includeValues
        self.tolerateDamage = tolerateDamage
    }
}

/// How the user wants the output laid out, where a format has a choice (not what to remove: that is policy).
public struct LayoutOptions: Sendable, Equatable {
    /// MP4/MOV: put the movie box before the sample data so playback can start while downloading.
    public var faststart: Bool

    public init(faststart: Bool = false) { self.faststart = faststart }
}

/// The policy's decisions, one per scanned item, and the policy's global settings.
public struct CleanPlan: Sendable {
    public var findings: [Finding]
    public var policy: Policy
    public var layout: LayoutOptions

    public init(findings: [Finding], policy: Policy, layout: LayoutOptions = LayoutOptions()) {
        self.findings = findings
        self.policy = policy
        self.layout = layout
    }

    public func disposition(_ index: Int) -> Disposition { findings[index].disposition }
    public func keeps(_ index: Int) -> Bool { findings[index].disposition == .keep }
    /// The item is an embedded file to keep cleaned inside (`ScanResult.cleanedEmbeddedFiles`).
    public func cleans(_ index: Int) -> Bool { findings[index].disposition == .clean }
}

public struct CleanResult: Sendable {
    public var method: CleanMethod
    public var notes: [Note]
    /// Outcomes that differ from what the disposition implies (an orientation kept because baking was impossible).
    public var outcomes: [Int: Outcome]
    /// How far decoded samples may differ from the original's when the cleaner says so (a bake under
    /// `orientation: rotate`); 0 means identical.
    public var sampleTolerance: Int = 0
    /// Set when the cleaner turned the image in the DCT domain under `reencode: true` although decoder rounding
    /// makes its decode differ from the original's displayed render (`JPEGBake.Decision.turn`): verification
    /// then holds the decoded output to this PSNR in dB, instead of to identical pixels.
    public var minimumPSNR: Double?
    /// What the output is made of, range by range, with the reason each may stay: set by every handler that writes
    /// through `OutputPlan` (its `write` returns it); nil for the few that do not (see `OutputLedger`).
    public var ledger: OutputLedger?

    public init(method: CleanMethod, notes: [Note] = [], outcomes: [Int: Outcome] = [:], ledger: OutputLedger? = nil) {
        self.method = method
        self.notes = notes
        self.outcomes = outcomes
        self.ledger = ledger
    }
}

/// How the decoded content of the output compares with the original's.
public struct ContentCheck: Sendable {
    public var method: String
    public var passed: Bool
    public var detail: String?
    /// Ranges of the cleaned file this check compared byte for byte with the original's (a JPEG's frame, tables
    /// and entropy-coded data): the residue proof need not search them again (see docs/threat-model.md).
    public var identical: [(original: Range<Int64>, cleaned: Range<Int64>)] = []
    /// What both files hold in coded form that a byte search cannot see (a PDF's compressed streams, decoded),
    /// the original's and the cleaned file's: the residue proof searches them too, after each file's bytes.
    public var decoded: (original: [UInt8], cleaned: [UInt8])?

    public init(method: String, passed: Bool, detail: String? = nil) {
        self.method = method
        self.passed = passed
        self.detail = detail
    }

    /// A passed or failed check with the ranges it compared byte for byte.
    init(method: String, passed: Bool, detail: String? = nil, identical: IdenticalRanges) {
        self.init(method: method, passed: passed, detail: detail)
        self.identical = identical.pairs
    }
}

/// One container format: finds every metadata item and rewrites the container without the removed ones.
/// Implementations live one per folder and are listed in `FormatRegistry`, which boxes each one once
/// (`AnyFormatHandler`); `docs/adding-a-format.md` says what a new one takes.
public protocol FormatHandler: Sendable {
    /// The handler's own parse of a file, handed back to it for `clean` and `verifyContent`.
    associatedtype Layout: Sendable

    func scan(_ input: any ByteSource, options: ScanOptions) throws -> ScanResult<Layout>
    /// Turns the policy's decisions this handler cannot carry out for this file (an orientation that cannot be
    /// baked exactly, a HEIF's primary image) into `keep` with a reason. It must depend only on what a clean
    /// leaves unchanged (the coded image, the item itself), so that scan, clean and a second clean all decide
    /// the same: that is what makes clean a fixed point. Most formats can do whatever the policy says (the default).
    func settle(_ findings: [Finding], input: any ByteSource, scan: ScanResult<Layout>, policy: Policy) throws -> [Finding]
    /// Writes the cleaned file to `output`. Must copy coded image/sample data unchanged unless the result
    /// says `.losslessTransform` or `.reencode`.
    func clean(_ input: any ByteSource, scan: ScanResult<Layout>, plan: CleanPlan, to output: any OutputSink) throws -> CleanResult
    /// Compares decoded or coded content of the cleaned file with the original, each described by its scan's
    /// layout (`before` the original's, `after` the cleaned file's).
    func verifyContent(original: any ByteSource, _ before: Layout, cleaned: any ByteSource, _ after: Layout,
                       result: CleanResult) throws -> ContentCheck
    /// A bake in `plan` that only a re-encode can do (`ReencodableBake`); nil (the default) when there is none.
    func reencodableBake(input: any ByteSource, scan: ScanResult<Layout>, plan: CleanPlan) -> ReencodableBake?
    /// The cleaned file scanned for verification, `original` and `before` being what it was cleaned from. It must
    /// return what `scan(cleaned, options: ScanOptions())` returns (the default); a handler may use the original
    /// only to get there faster (JPEG: `EntropyHint`).
    func rescan(_ cleaned: any ByteSource, original: any ByteSource, before: ScanResult<Layout>) throws -> ScanResult<Layout>
}

extension FormatHandler {
    public func rescan(_ cleaned: any ByteSource, original: any ByteSource, before: ScanResult<Layout>) throws -> ScanResult<Layout> {
        try scan(cleaned, options: ScanOptions())
    }

    public func settle(_ findings: [Finding], input: any ByteSource, scan: ScanResult<Layout>, policy: Policy) throws -> [Finding] {
        findings
    }
}

extension Array where Element == Finding {
    /// Keeps the item at `index` instead of what the policy said, for `reason` (see `FormatHandler.settle`).
    mutating func keep(_ index: Int, because reason: String) {
        guard indices.contains(index), self[index].disposition != .keep, self[index].disposition != .fail else { return }
        self[index] = self[index].keptInstead(because: reason)
    }

    /// Keeps every item a scan found it must leave in place, each for its reason (item index → reason).
    func keeping(_ reasons: [Int: String]) -> [Finding] {
        var settled = self
        for (index, reason) in reasons { settled.keep(index, because: reason) }
        return settled
    }
}
