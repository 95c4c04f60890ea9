// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubFormats

/// The Report stage: what a file's report says once its clean is verified and written, built from the outcome
/// (the handler's result and the settled decisions), whichever way the output was produced.
extension FileReport {
    /// Nothing to remove: the file is clean as it is, each item with its planned outcome.
    mutating func recordClean(_ decision: Decision, showValues: Bool) {
        status = .clean
        findings = decision.findings.map { var f = $0; f.outcome = f.plannedOutcome; return f }
            .forReport(showValues: showValues)
    }

    /// Marks a verified, written clean in the report, with each finding's outcome.
    mutating func recordCleaned(_ result: CleanResult, findings: [Finding], output: String, showValues: Bool) {
        status = .cleaned
        method = result.method
        self.output = output
        notes += result.notes
        for finding in findings where finding.disposition == .keep {
            guard let reason = finding.reason else { continue }
            let orientation = Policy.orientationKeys.contains(finding.item.key)
            notes.append(Note(orientation ? .warning : .info,
                              code: orientation ? "orientation-fallback" : "kept-instead",
                              "\(finding.item.key) kept: \(reason)"))
        }
        // A signed manifest that goes although the policy keeps provenance: the report says why, not only -v.
        let keepValid = "provenance keep-valid: "
        for finding in findings where finding.disposition == .remove && finding.rule.hasPrefix(keepValid) {
            notes.append(Note(.warning, code: "provenance-removed",
                              "C2PA manifest removed: \(finding.rule.dropFirst(keepValid.count))",
                              offset: finding.item.offset))
        }
        self.findings = findings.enumerated().map { index, finding in
            var f = finding
            f.outcome = result.outcomes[index] ?? finding.plannedOutcome
            return f
        }.forReport(showValues: showValues)
    }
}
