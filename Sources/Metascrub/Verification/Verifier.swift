// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubFormats

/// Every check an output passes before anything is written, for every caller (file clean, stream clean,
/// conversion, orientation re-encode):
/// - nothing the scanner could not walk, unless the policy keeps unwalked data (`unwalked: keep`);
/// - the output parses, and a re-scan settled with the policy finds nothing it removes;
/// - its content is the original's (remux comparison, transform check, or the re-encode's fidelity, measured by
///   the caller);
/// - the ledger: a plan-written output is covered exactly by its plan's ranges, each with a reason that holds
///   (`LedgerCoverage`);
/// - the residue proof: no removed item's recognisable bytes anywhere outside the output's kept items.
/// Any failure throws `verificationFailed` (exit 3); the report names item keys and offsets, never values unless
/// `--show-values`.
struct Verifier {
    var options: ProcessingOptions

    private var decide: Decide { Decide(policy: options.policy) }

    /// Scan notes that say part of the file was not walked, so nothing inside it was listed or proven clean.
    static let unwalkedCodes: Set<String> = ["layers-unwalked", "makernote-unknown", "sei-too-large"]

    /// Before anything is cleaned: a part the scanner could not walk fails the clean under `unwalked: fail`,
    /// unless the clean removes it anyway (a maker note of an unknown layout under a policy that drops maker
    /// notes): what goes need not be proven clean.
    func checkWalked(_ notes: [Note], findings: [Finding] = []) throws {
        try Self.checkWalked(notes, findings: findings, policy: options.policy)
    }

    static func checkWalked(_ notes: [Note], findings: [Finding] = [], policy: Policy) throws {
        guard policy.unwalked == .fail else { return }
        let unwalked = notes.filter { note in
            guard Self.unwalkedCodes.contains(note.code) else { return false }
            guard let at = note.offset else { return true }
            return !findings.contains { finding in
                guard !finding.disposition.survives, let offset = finding.item.offset,
                      let length = finding.item.length else { return false }
                return offset <= at && at < offset + max(length, 1)
            }
        }
        guard let first = unwalked.first else { return }
        let at = first.offset.map { " at byte \($0)" } ?? ""
        throw MetascrubError.verificationFailed(
            reason: "part of the file could not be walked (\(first.code)\(at)), so what it holds cannot be proven removed; `unwalked: keep` in the policy copies it unlisted")
    }

    /// A remuxed (or transformed) output: re-scan, content comparison, ledger, residue proof. Returns what the
    /// report says about the output; a failure throws `ProofFailure`, with the verification as far as it got.
    func prove(original: any ByteSource, scan: FormatScan, findings: [Finding], result: CleanResult,
               cleaned: any ByteSource) throws -> Proof {
        let rescan: FormatRescan
        do {
            rescan = try scan.rescan(cleaned, original: original)
        } catch {
            throw MetascrubError.verificationFailed(reason: "the cleaned file does not parse: \(FileProcessor.typed(error).description)")
        }
        let after = try decide.decisions(rescan.scan, cleaned)
        let outputManifests = rescan.scan.provenance
        let remaining = Self.remaining(after)
        let content = try rescan.verifyContent(original: original, cleaned: cleaned, result: result)
        var verification = Verification(
            rescan: remaining.isEmpty ? .passed : .failed, remaining: remaining,
            content: content.method, contentResult: content.passed ? .passed : .failed)
        func fail(_ reason: String) -> ProofFailure {
            ProofFailure(error: .verificationFailed(reason: reason), verification: verification, outputManifests: outputManifests)
        }
        guard remaining.isEmpty else { throw fail("still present after cleaning: \(remaining.joined(separator: ", "))") }
        guard content.passed else { throw fail("image content changed: \(content.detail ?? content.method)") }
        if let ledger = result.ledger {
            do {
                try LedgerCoverage(items: scan.items, findings: findings, compared: content.identical.map(\.original))
                    .check(ledger, original: original, cleaned: cleaned)
            } catch let violation as LedgerViolation {
                throw fail("the output is not what its plan accounts for (ledger): \(violation.named(scan.items))")
            }
        }
        // Only a remux's comparison is with the original's own bytes (a transform's is with the turned image).
        // Decoded streams follow each file's bytes, so offsets into the files stay what the scans say.
        let searched = try content.decoded.map { decoded in
            (MemoryByteSource(try original.readAll() + decoded.original), MemoryByteSource(try cleaned.readAll() + decoded.cleaned))
        }
        do {
            try proveNoResidue(original: searched?.0 ?? original, items: scan.items, findings: findings,
                               cleaned: searched?.1 ?? cleaned, after: after,
                               copies: result.method == .remux ? content.identical : [], verification: &verification)
        } catch var failure as ProofFailure {
            failure.outputManifests = outputManifests
            throw failure
        }
        return Proof(verification: verification, sha256After: options.digests ? try Hashing.sha256(cleaned) : nil,
                     bytesAfter: cleaned.size, outputManifests: outputManifests)
    }

    /// A re-encoded output (conversion, orientation re-encode) whose fidelity the caller measured: detected as its
    /// format, parses, a settled re-scan finds nothing the policy removes, and the residue proof passes.
    func verify(reencoded image: ReencodedImage, noun: String, original: any ByteSource, scan: FormatScan,
                findings: [Finding], report: inout FileReport) throws {
        let output = MemoryByteSource(image.bytes)
        guard let entry = FormatRegistry.detect(Array(image.bytes.prefix(Magic.headLength)), in: options.formats),
              entry.format.id == image.format, let handler = entry.handler else {
            throw MetascrubError.verificationFailed(reason: "the \(noun) file is not recognised as \(image.format)")
        }
        let rescan: FormatScan
        do {
            rescan = try handler.scan(output, options: ScanOptions())
        } catch {
            throw MetascrubError.verificationFailed(reason: "the \(noun) file does not parse: \(FileProcessor.typed(error).description)")
        }
        let after = try decide.decisions(rescan, output)
        report.recordBindings(before: scan.provenance, after: rescan.provenance, findings: findings)
        let remaining = Self.remaining(after)
        var verification = Verification(
            rescan: remaining.isEmpty ? .passed : .failed, remaining: remaining,
            content: "decoded pixels against the original's displayed render: \(image.fidelity.summary)", contentResult: .passed)
        report.verification = verification
        guard remaining.isEmpty else {
            throw MetascrubError.verificationFailed(reason: "still present after \(noun == "converted" ? "converting" : "re-encoding"): \(remaining.joined(separator: ", "))")
        }
        do {
            try proveNoResidue(original: original, items: scan.items, findings: findings, cleaned: output, after: after,
                               verification: &verification)
        } catch let failure as ProofFailure {
            report.verification = failure.verification
            throw failure.error
        }
    }

    /// Keys the policy (settled, as for the original) still removes from a re-scanned output.
    static func remaining(_ after: [Finding]) -> [String] {
        Array(Set(after.filter { $0.disposition != .keep }.map(\.item.key))).sorted()
    }

    /// The residue proof (`ResidueProof`) against the output's kept items.
    func proveNoResidue(original: any ByteSource, items: [MetadataItem], findings: [Finding], cleaned: any ByteSource,
                        after: [Finding], copies: [(original: Range<Int64>, cleaned: Range<Int64>)] = [],
                        verification: inout Verification) throws {
        // One decision per scanned item is what every role below is indexed by: a proof that skipped itself on a
        // mismatch would let the file through unproven.
        guard items.count == findings.count else {
            throw MetascrubError.inconsistent(stage: "residue proof", reason:
                "\(items.count) scanned items but \(findings.count) decisions, "
                    + "so removed items cannot be told from kept ones")
        }
        let afterRoles = ItemRoles(items: after.map(\.item), findings: after)
        let kept = after.indices.compactMap { index -> Range<Int64>? in
            guard afterRoles.exempt(index), let offset = after[index].item.offset, let length = after[index].item.length else { return nil }
            return offset..<offset + length
        }
        let roles = ItemRoles(items: items, findings: findings)
        // Kept blocks the clean rebuilt without something (by key: the output's scan is not trusted to list
        // what a broken rebuild left in them).
        let rebuilt = Set(items.indices.filter { !roles.removed($0) && roles.holdsRemoved($0) }.map { items[$0].key })
        let untouched = after.indices.compactMap { index -> Range<Int64>? in
            guard afterRoles.exempt(index), !rebuilt.contains(after[index].item.key),
                  let offset = after[index].item.offset, let length = after[index].item.length else { return nil }
            return offset..<offset + length
        }
        let residues = try ResidueProof(roles: roles)
            .residues(original: original, cleaned: cleaned, keptInOutput: kept, keptUntouchedInOutput: untouched,
                      copies: copies)
        guard !residues.isEmpty else { return }
        verification.rescan = .failed
        verification.remaining = Array(Set(residues.map(\.key))).sorted()
        let named = residues.prefix(5).map { residue in
            var text = "\(residue.key) at byte \(residue.offset)"
            if options.showValues, let value = items[residue.item].value { text += " (\(value))" }
            return text
        }
        throw ProofFailure(error: .verificationFailed(
            reason: "removed data still present after cleaning (residue proof): \(named.joined(separator: ", "))\(residues.count > 5 ? ", …" : "")"),
                           verification: verification)
    }
}

/// What the one verifier says about an output that passed: the report's verification, digest and size.
struct Proof: Sendable {
    var verification: Verification
    var sha256After: String?
    var bytesAfter: Int64
    /// The output's C2PA manifest stores, for the report's bindings after the clean.
    var outputManifests: [ProvenanceManifest] = []
}

/// A failed proof: the error (exit 3, nothing written) and the verification as far as it got, for the report.
struct ProofFailure: Error {
    var error: MetascrubError
    var verification: Verification?
    /// The output's C2PA manifest stores when the re-scan got that far.
    var outputManifests: [ProvenanceManifest]?
}

extension FileReport {
    mutating func record(_ proof: Proof) {
        verification = proof.verification
        if let digest = proof.sha256After { sha256After = digest }
        bytesAfter = proof.bytesAfter
    }
}

extension Array where Element == Finding {
    /// The findings as a report shows them: values only under `--show-values` (the pipeline always scans with
    /// values, for the residue proof).
    func forReport(showValues: Bool) -> [Finding] {
        showValues ? self : map { var f = $0; f.item.value = nil; return f }
    }
}
