// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubFormats

/// The Prove stage: the one verifier (`Verifier`: re-scan, content, ledger coverage, residue) run on a produced
/// output before anything is committed. A value in (the decision, the result, the output), a `Proof` out; a
/// failure throws `ProofFailure`.
struct Prove: Sendable {
    var options: ProcessingOptions

    func callAsFunction(original: any ByteSource, _ decision: Decision, _ result: CleanResult,
                        cleaned: any ByteSource) throws -> Proof {
        try Verifier(options: options).prove(original: original, scan: decision.scan, findings: decision.findings,
                                             result: result, cleaned: cleaned)
    }
}
