// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// The policy's `provenance:` setting applied to a scan's C2PA manifest stores, after the key and category rules.
///
/// A manifest's hard binding (`c2pa.hash.data`) is a SHA-256 over every byte of the file outside the manifest, so
/// it survives a clean only when the clean changes nothing else: a kept manifest is removed (or, under `fail`,
/// the file refused) when anything else in the file is removed, baked or cleaned, when its binding does not match
/// the file as it is, or when something inside it is removed (a manifest cannot be edited without re-signing).
/// Run on every scan, so the verification's re-scan of the output checks the binding again on the written bytes.
enum ProvenanceRule {
    static func settle(_ findings: [Finding], manifests: [ProvenanceManifest], policy: Policy) -> [Finding] {
        guard !manifests.isEmpty else { return findings }
        var settled = findings
        let subtrees = manifests.map { subtree(of: $0.item, in: findings) }
        let inManifest = subtrees.reduce(into: Set<Int>()) { $0.formUnion($1) }
        for (manifest, subtree) in zip(manifests, subtrees) where settled.indices.contains(manifest.item) {
            let store = manifest.item
            if policy.provenance == .remove {
                if settled[store].disposition != .fail {
                    decide(store, .remove, "provenance: remove", subtree, &settled)
                }
                continue
            }
            if !settled[store].disposition.survives {
                // Removed because of what it holds: say so in the manifest's words (and under `fail`, refuse).
                // The children the rules themselves remove (not those removed only because the store goes).
                let causes = subtree.sorted().filter {
                    $0 != store && !findings[$0].disposition.survives && !findings[$0].rule.hasPrefix("inside ")
                }
                guard settled[store].rule.hasPrefix("contains"), let first = causes.first else { continue }
                let child = causes.first { findings[$0].item.category == .location } ?? first
                let reason = findings[child].item.category == .location
                    ? "it carries a position (\(findings[child].item.key))"
                    : "it holds \(findings[child].item.key), which the policy removes, "
                        + "and cannot be edited without its signature"
                decide(store, policy.provenance == .fail ? .fail : .remove,
                       "provenance \(policy.provenance.rawValue): \(reason)", subtree, &settled)
                continue
            }
            var reason: String?
            let outside = settled.indices.filter { !inManifest.contains($0) }
            if let changed = outside.first(where: { settled[$0].disposition != .keep }) {
                reason = "its signature covers bytes this clean changes (\(settled[changed].item.key))"
            } else if manifest.binding == .invalid {
                reason = "its hard binding does not match the file's bytes"
            }
            guard let reason else { continue }
            decide(store, policy.provenance == .fail ? .fail : .remove,
                   "provenance \(policy.provenance.rawValue): \(reason)", subtree, &settled)
        }
        return settled
    }

    /// The store and every item below it.
    private static func subtree(of root: Int, in findings: [Finding]) -> Set<Int> {
        var members: Set<Int> = [root]
        // Children follow their parents in a scan's list.
        for index in findings.indices where index > root {
            if let parent = findings[index].item.parent, members.contains(parent) { members.insert(index) }
        }
        return members
    }

    private static func decide(
        _ store: Int, _ disposition: Disposition, _ rule: String, _ subtree: Set<Int>, _ findings: inout [Finding]
    ) {
        findings[store].disposition = disposition
        findings[store].rule = rule
        findings[store].reason = nil
        for index in subtree where index != store && findings[index].disposition.survives {
            findings[index].disposition = .remove
            findings[index].rule = "inside \(findings[store].item.key)"
        }
    }
}
