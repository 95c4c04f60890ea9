// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubFormats

/// The Produce stage: the handler writes the output its decision asks for to a sink, and hands back what it did
/// (`CleanResult`, with the plan's ledger when it wrote through `OutputPlan`).
struct Produce: Sendable {
    var policy: Policy
    var layout: LayoutOptions

    /// The decision's plan: the settled findings with the policy's global settings and the user's layout choices.
    func plan(_ decision: Decision) -> CleanPlan {
        CleanPlan(findings: decision.findings, policy: policy, layout: layout)
    }

    func callAsFunction(_ source: any ByteSource, _ decision: Decision, to sink: any OutputSink) throws -> CleanResult {
        try decision.scan.clean(source, plan: plan(decision), to: sink)
    }
}
