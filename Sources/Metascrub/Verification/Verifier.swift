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

    private var processor: FileProcessor { FileProcessor(options: options) }

    /// Scan notes that say part of the file was not walked, so nothing inside it was listed or proven clean.
    static let unwalkedCodes: Set<String> = ["layers-unwalked", "makernote-unknown", "sei-too-large"]

    /// Before anything is cleaned: a part the scanner could not walk fails the clean under `unwalked: fail`,
    /// unless the clean removes it anyway (a maker note of an unknown layout under a policy that drops maker
    /// notes): what goes need not be proven clean.
    func checkWalked(_ notes: [Note], findings: [Finding] = []) throws {
        guard options.policy.unwalked == .fail else { return }
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

    /// A remuxed (or transformed) output: re-scan, content comparison, residue proof. Fills in the report's
    /// verification and output digest.
    func verify(original: any ByteSource, scan: FormatScan, findings: [Finding], result: CleanResult,
                cleaned: any ByteSource, report: inout FileReport) throws {
        let rescan: FormatRescan
        do {
            rescan = try scan.rescan(cleaned, original: original)
        } catch {
            throw MetascrubError.verificationFailed(reason: "the cleaned file does not parse: \(FileProcessor.typed(error).description)")
        }
        let after = try processor.decisions(rescan.scan, cleaned)
        report.recordBindings(before: scan.provenance, after: rescan.scan.provenance, findings: findings)
        let remaining = Self.remaining(after)
        let content = try rescan.verifyContent(original: original, cleaned: cleaned, result: result)
        report.verification = Verification(
            rescan: remaining.isEmpty ? .passed : .failed, remaining: remaining,
            content: content.method, contentResult: content.passed ? .passed : .failed)
        guard remaining.isEmpty else {
            throw MetascrubError.verificationFailed(reason: "still present after cleaning: \(remaining.joined(separator: ", "))")
        }
        guard content.passed else {
            throw MetascrubError.verificationFailed(reason: "image content changed: \(content.detail ?? content.method)")
        }
        if let ledger = result.ledger {
            do {
                try LedgerCoverage(items: scan.items, findings: findings, compared: content.identical.map(\.original))
                    .check(ledger, original: original, cleaned: cleaned)
            } catch let violation as LedgerViolation {
                var named = ""
                switch violation.kind {
                case .itemNotKept(let item), .outsideKeptItem(let item, _):
                    if scan.items.indices.contains(item) { named = " (\(scan.items[item].key))" }
                default: break
                }
                throw MetascrubError.verificationFailed(reason: "the output is not what its plan accounts for (ledger): \(violation)\(named)")
            }
        }
        // Only a remux's comparison is with the original's own bytes (a transform's is with the turned image).
        // Decoded streams follow each file's bytes, so offsets into the files stay what the scans say.
        let searched = try content.decoded.map { decoded in
            (MemoryByteSource(try original.readAll() + decoded.original), MemoryByteSource(try cleaned.readAll() + decoded.cleaned))
        }
        try proveNoResidue(original: searched?.0 ?? original, items: scan.items, findings: findings, cleaned: searched?.1 ?? cleaned,
                           after: after, copies: result.method == .remux ? content.identical : [], report: &report)
        if options.digests { report.sha256After = try Hashing.sha256(cleaned) }
        report.bytesAfter = cleaned.size
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
        let after = try processor.decisions(rescan, output)
        report.recordBindings(before: scan.provenance, after: rescan.provenance, findings: findings)
        let remaining = Self.remaining(after)
        report.verification = Verification(
            rescan: remaining.isEmpty ? .passed : .failed, remaining: remaining,
            content: "decoded pixels against the original's displayed render: \(image.fidelity.summary)", contentResult: .passed)
        guard remaining.isEmpty else {
            throw MetascrubError.verificationFailed(reason: "still present after \(noun == "converted" ? "converting" : "re-encoding"): \(remaining.joined(separator: ", "))")
        }
        try proveNoResidue(original: original, items: scan.items, findings: findings, cleaned: output, after: after, report: &report)
    }

    /// Keys the policy (settled, as for the original) still removes from a re-scanned output.
    static func remaining(_ after: [Finding]) -> [String] {
        Array(Set(after.filter { $0.disposition != .keep }.map(\.item.key))).sorted()
    }

    /// The residue proof (`ResidueProof`) against the output's kept items.
    func proveNoResidue(original: any ByteSource, items: [MetadataItem], findings: [Finding], cleaned: any ByteSource,
                        after: [Finding], copies: [(original: Range<Int64>, cleaned: Range<Int64>)] = [],
                        report: inout FileReport) throws {
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
        report.verification?.rescan = .failed
        report.verification?.remaining = Array(Set(residues.map(\.key))).sorted()
        let named = residues.prefix(5).map { residue in
            var text = "\(residue.key) at byte \(residue.offset)"
            if options.showValues, let value = items[residue.item].value { text += " (\(value))" }
            return text
        }
        throw MetascrubError.verificationFailed(
            reason: "removed data still present after cleaning (residue proof): \(named.joined(separator: ", "))\(residues.count > 5 ? ", …" : "")")
    }
}

extension Array where Element == Finding {
    /// The findings as a report shows them: values only under `--show-values` (the pipeline always scans with
    /// values, for the residue proof).
    func forReport(showValues: Bool) -> [Finding] {
        showValues ? self : map { var f = $0; f.item.value = nil; return f }
    }
}
