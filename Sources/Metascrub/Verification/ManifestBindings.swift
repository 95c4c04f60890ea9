// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubFormats

extension FileReport {
    /// The C2PA manifests a scan found, as the report shows them (generator, signer and actions only under
    /// `--show-values`); nothing when the file has none.
    mutating func describe(manifests stores: [ProvenanceManifest], showValues: Bool) {
        let described = stores.flatMap(\.reports).map { showValues ? $0 : $0.withoutValues }
        manifests = described.isEmpty ? nil : described
    }

    /// Each active manifest's binding on the output: the output's stores are the original's that the clean kept,
    /// in the same order; a store the clean removed has none.
    mutating func recordBindings(before stores: [ProvenanceManifest], after output: [ProvenanceManifest],
                                 findings: [Finding]) {
        guard var described = manifests else { return }
        var kept = output.makeIterator()
        for store in stores {
            let survives = findings.indices.contains(store.item) && findings[store.item].disposition.survives
            let after: ManifestReport.Binding
            var detail: String?
            if survives, let written = kept.next() {
                (after, detail) = written.binding.report
            } else {
                after = .removed
            }
            for manifest in store.manifests where manifest.active {
                guard let at = described.firstIndex(where: { $0.finding == manifest.item }) else { continue }
                described[at].bindingAfter = after
                if let detail, described[at].bindingDetail == nil { described[at].bindingDetail = detail }
            }
        }
        manifests = described
    }
}
