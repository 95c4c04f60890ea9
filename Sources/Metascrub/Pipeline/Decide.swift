// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubFormats

/// What the scan and the policy say about one file, as a value: the scan, a settled decision per item, the notes
/// the report takes from them, and what the policy forbids.
struct Decision: Sendable {
    var scan: FormatScan
    /// One per scanned item, settled by the handler (`FormatScan.settle`).
    var findings: [Finding]
    /// The scan's notes, and why a signed manifest was refused.
    var notes: [Note]
    /// Keys of items the policy forbids (`fail`): the file is refused naming them.
    var forbidden: [String]

    /// Nothing to remove: the file is clean as it is.
    var keepsEverything: Bool { findings.allSatisfy { $0.disposition == .keep } }
}

/// The Decide stage: scan (honouring `damaged:`, always with values, for the residue proof) and the policy's
/// decision for every item, settled by the handler. The one meaning scan, clean and the verification's re-scan
/// share, so what clean keeps is never reported as still to remove.
struct Decide: Sendable {
    var policy: Policy

    func callAsFunction(_ source: any ByteSource, handler: AnyFormatHandler) throws -> Decision {
        let options = ScanOptions(includeValues: true, tolerateDamage: policy.damaged == .clean)
        let scan = try handler.scan(source, options: options)
        let findings = try decisions(scan, source)
        let forbidden = findings.filter { $0.disposition == .fail && $0.item.parent == nil }
        var notes = scan.notes
        // A signed manifest refused under `provenance: fail`: the report says what would have broken it.
        for finding in forbidden where finding.rule.hasPrefix("provenance fail: ") {
            let why = finding.rule.dropFirst("provenance fail: ".count)
            notes.append(Note(.error, code: "provenance-refused", "C2PA manifest not broken (provenance: fail): \(why)",
                              offset: finding.item.offset))
        }
        let keys = Array(Set(forbidden.map(\.item.key))).sorted()
        return Decision(scan: scan, findings: findings, notes: notes, forbidden: keys)
    }

    /// The policy's decision for every item of `scan`, settled by its handler.
    func decisions(_ scan: FormatScan, _ source: any ByteSource) throws -> [Finding] {
        try scan.settle(policy.evaluate(scan.items), input: source, policy: policy)
    }

    /// Why the file may not be cleaned at all: an item the policy forbids, or (under `unwalked: fail`) a part the
    /// scanner could not walk when something is to be removed.
    func refusal(_ decision: Decision) -> MetascrubError? {
        if !decision.forbidden.isEmpty { return .policyViolation(keys: decision.forbidden) }
        guard !decision.keepsEverything else { return nil }
        do {
            try Verifier.checkWalked(decision.scan.notes, findings: decision.findings, policy: policy)
            return nil
        } catch {
            return FileProcessor.typed(error)
        }
    }
}

extension FileReport {
    /// The decisions as the report shows them (values only under `--show-values`), with the scan's notes.
    mutating func record(_ decision: Decision, showValues: Bool) {
        findings = decision.findings.forReport(showValues: showValues)
        notes += decision.notes
        describe(manifests: decision.scan.provenance, showValues: showValues)
    }
}
