// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import MetascrubCore

/// A C2PA manifest store found in a file, as the pipeline needs it after the scan: the store's item and whether
/// its hard binding matches the file's bytes (checked at every scan, so on the original and on the output).
public struct ProvenanceManifest: Sendable, Equatable {
    public enum Binding: Sendable, Equatable {
        case valid
        /// The file's bytes no longer hash to what the signed manifest says.
        case invalid
        /// The binding could not be checked (a BMFF hash, another algorithm, a store that does not parse).
        case unchecked(String)
    }

    /// One manifest of the store, as the report describes it.
    public struct Manifest: Sendable, Equatable {
        /// Index of the manifest's item (`c2pa:manifest`).
        public var item: Int
        public var active: Bool
        public var generator: String?
        public var signer: ManifestReport.Signer?
        public var actions: [String]
    }

    /// Index of the store's item (`jumbf:c2pa`); its assertions are items below it.
    public var item: Int
    public var binding: Binding
    public var manifests: [Manifest] = []

    /// The store's manifests as a report shows them, the active one with its binding on this file.
    public var reports: [ManifestReport] {
        manifests.map { manifest in
            var report = ManifestReport(
                finding: manifest.item, active: manifest.active, claimGenerator: manifest.generator,
                signer: manifest.signer, actions: manifest.actions)
            if manifest.active { (report.bindingBefore, report.bindingDetail) = binding.report }
            return report
        }
    }
}

extension ProvenanceManifest.Binding {
    /// The binding as a report names it, with why it was not checked.
    public var report: (ManifestReport.Binding, String?) {
        switch self {
        case .valid: (.valid, nil)
        case .invalid: (.invalid, nil)
        case .unchecked(let why): (.unchecked, why)
        }
    }
}

/// Where the bytes of a JUMBF box sit in the file: one run, or (JPEG APP11) one run per segment.
struct JUMBFPlacement {
    /// (offset in the JUMBF bytes, file offset) at the start of each run, in order.
    var runs: [(at: Int, file: Int64)]

    static func contiguous(_ file: Int64) -> JUMBFPlacement { JUMBFPlacement(runs: [(0, file)]) }

    func fileOffset(_ at: Int) -> Int64 {
        let run = runs.last { $0.at <= at } ?? runs[0]
        return run.file + Int64(at - run.at)
    }
}

extension ItemCollector {
    /// Lists a C2PA manifest store's content as items below the store's item `store`: per manifest its claim,
    /// signature and assertions, the text of JSON assertions property by property (positions, authors), and
    /// thumbnails scanned as images of their own. Checks the active manifest's hard binding against `source`.
    mutating func c2pa(_ bytes: [UInt8], store: Int, placement: JUMBFPlacement, source: any ByteSource) throws {
        let origin = placement.fileOffset(0)
        let path = items[store].location
        let parsed: C2PAStore
        do {
            parsed = try C2PAStore.parse(bytes, origin: origin, path: path)
        } catch let error as MetascrubError {
            // Unread, it cannot be shown to hold no position: unknown to the policy, so location and share remove it.
            return unread(store, error.description)
        }
        let binding: ProvenanceManifest.Binding
        switch parsed.hardBinding(origin: origin) {
        case .success(let hash):
            binding = try hash.matches(source).map { $0 ? .valid : .invalid }
                ?? .unchecked("its binding could not be computed (\(hash.alg))")
        case .failure(.none(let why)), .failure(.unchecked(let why)):
            binding = .unchecked(why)
        }
        var found = ProvenanceManifest(item: store, binding: binding)
        let state = switch binding {
        case .valid: "hard binding valid"
        case .invalid: "hard binding does not match the file"
        case .unchecked(let why): "hard binding not checked: \(why)"
        }
        let count = parsed.manifests.count
        items[store].detail = "C2PA manifest store, \(count) manifest\(count == 1 ? "" : "s"), \(state)"

        func range(_ r: Range<Int>) -> Range<Int64> {
            let start = placement.fileOffset(r.lowerBound)
            return start..<start + Int64(r.count)
        }
        for (n, manifest) in parsed.manifests.enumerated() {
            let active = n == parsed.manifests.count - 1
            let location = "\(path)/\(manifest.label)"
            let said = [manifest.label, manifest.claim?.generator, manifest.signer.map { "signed by \($0.description)" }]
            let manifestItem = add("c2pa:manifest", .provenance, range(manifest.range), location: location,
                                   value: said.compactMap { $0 }.joined(separator: ", "),
                                   detail: active ? "active manifest" : "ingredient manifest", parent: store)
            found.manifests.append(ProvenanceManifest.Manifest(
                item: manifestItem, active: active, generator: manifest.claim?.generator,
                signer: manifest.signer.map { ManifestReport.Signer(commonName: $0.commonName,
                                                                   organization: $0.organization) },
                actions: Self.actions(of: manifest, in: parsed)))
            if let claim = manifest.claim {
                add("c2pa:claim", .provenance, range(claim.range), location: "\(location)/claim",
                    value: claim.generator,
                    detail: "claim (generator, assertion list)", parent: manifestItem)
            }
            if let signature = manifest.signature {
                // The COSE signature carries the signer's certificate chain: a name, an organisation, often a device.
                add("c2pa:signature", .identity, range(signature), location: "\(location)/signature",
                    detail: "COSE signature with the signer's certificate", parent: manifestItem)
            }
            for assertion in manifest.assertions {
                try self.assertion(assertion, in: parsed, location: "\(location)/\(assertion.label)", range: range,
                                   parent: manifestItem)
            }
        }
        provenance.append(found)
    }

    /// What a manifest's `c2pa.actions` assertions say was done (`c2pa.created`, `c2pa.edited`, …), in order.
    static func actions(of manifest: C2PAStore.Manifest, in store: C2PAStore) -> [String] {
        manifest.assertions.filter { $0.label.hasPrefix("c2pa.actions") && $0.kind == .cbor }.flatMap {
            actionNames(Array(store.bytes[$0.payload]), label: $0.label) ?? []
        }
    }

    private static func actionNames(_ payload: [UInt8], label: String) -> [String]? {
        let value = try? CBORReader.decode(payload, origin: 0, path: label)
        return value?["actions"]?.array?.compactMap { $0["action"]?.text }
    }

    private mutating func assertion(_ assertion: C2PAStore.Assertion, in store: C2PAStore, location: String,
                                    range: (Range<Int>) -> Range<Int64>, parent: Int) throws {
        let label = assertion.label
        let key = "c2pa:\(label)"
        let payload = Array(store.bytes[assertion.payload])
        let at = range(assertion.payload).lowerBound
        let known = Self.c2paLabels.contains { label.hasPrefix($0) }
        let category: Category
        if label.hasPrefix("c2pa.thumbnail") { category = .embedded }
        else if ["stds.exif", "stds.iptc", "stds.schema-org"].contains(where: label.hasPrefix) { category = .content }
        else if label.contains("identity") { category = .identity }
        else { category = .provenance }
        let index = add(key, category, range(assertion.range), location: location,
                        value: assertion.kind == .json || assertion.kind == .cbor ? Self.summary(label, payload) : nil,
                        detail: "C2PA assertion (\(assertion.kind))", unknown: !known && category == .provenance,
                        parent: parent)
        switch assertion.kind {
        case .file:
            // A thumbnail is an image of its own, with its own EXIF (an ingredient's may carry the parent's GPS).
            _ = embeddedFile(payload, item: index, origin: at)
        case .json:
            if let object = try? JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any] {
                for name in object.keys.sorted() where !name.hasPrefix("@") {
                    add("\(key)/\(name)", Self.category(of: name, in: label), location: "\(location)/\(name)",
                        offset: at,
                        length: Int64(payload.count), value: Self.render(object[name]), parent: index)
                }
            }
            inspect(index, payload: payload, origin: at)
        case .cbor:
            inspect(index, payload: payload, origin: at)
        case .other:
            break
        }
    }

    /// Assertion labels C2PA defines whose content is provenance itself (what was done, from what, bound how).
    static let c2paLabels = ["c2pa.actions", "c2pa.hash.", "c2pa.ingredient", "c2pa.soft-binding", "c2pa.cloud-data",
                             "c2pa.depthmap", "c2pa.time-stamp", "c2pa.certificate-status", "c2pa.asset-type",
                             "c2pa.asset-ref", "c2pa.embedded-data"]

    /// A property of a JSON assertion: EXIF and XMP names as XMP reads them, schema.org people and places by name.
    static func category(of name: String, in label: String) -> Category {
        if let colon = name.firstIndex(of: ":") {
            return XMPItems.category(prefix: String(name[..<colon]), name: String(name[name.index(after: colon)...]))
        }
        switch name {
        case "author", "creator", "contributor", "copyrightHolder", "publisher", "accountablePerson", "producer":
            return .identity
        case "locationCreated", "contentLocation", "spatialCoverage", "geo", "address": return .location
        case "dateCreated", "datePublished", "dateModified": return .time
        default: return NameClassifier.category(of: name, otherwise: .content)
        }
    }

    static func render(_ value: Any?) -> String? {
        guard let value else { return nil }
        if let text = value as? String { return String(text.prefix(200)) }
        guard JSONSerialization.isValidJSONObject(value),
              let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys]) else {
            return "\(value)"
        }
        return String(decoding: data.prefix(200), as: UTF8.self)
    }

    /// What an assertion says in a few words, for `--show-values` (the actions of `c2pa.actions`).
    static func summary(_ label: String, _ payload: [UInt8]) -> String? {
        guard label.hasPrefix("c2pa.actions") else { return nil }
        return actionNames(payload, label: label)?.joined(separator: ", ")
    }
}

extension ItemCollector {
    /// Reads the manifest store of a C2PA `uuid` box (ISOBMFF: HEIF, AVIF, MP4, JPEG XL) below its item `store`:
    /// after the extended type come a full box's version and flags, a purpose (`manifest`, or `merkle` for a
    /// fragment's hashes), for `manifest` an 8-byte offset to the first Merkle box, then the JUMBF store.
    mutating func c2paUUID(_ box: Box, store: Int, source: any ByteSource) throws {
        // `payloadOffset` is past the extended type already (`Box.headerSize`).
        guard box.payloadSize <= Int64(JPEGJUMBF.maxBox) else {
            return unread(store, "larger than \(JPEGJUMBF.maxBox) bytes")
        }
        let payload = try source.read(at: box.payloadOffset, count: Int(box.payloadSize))
        guard payload.count > 4, let nul = payload[4...].firstIndex(of: 0) else {
            return unread(store, "no purpose string")
        }
        let purpose = String(decoding: payload[4..<nul], as: UTF8.self)
        guard purpose == "manifest" else { return unread(store, "purpose \(purpose), not a manifest") }
        let start = nul + 1 + 8
        guard payload.count > start else { return unread(store, "no manifest store after its header") }
        try c2pa(Array(payload[start...]), store: store, placement: .contiguous(box.payloadOffset + Int64(start)),
                 source: source)
    }

    /// A C2PA box whose store was not read: unknown to the policy (location and share remove it), with a note.
    mutating func unread(_ store: Int, _ why: String) {
        note(Note(.warning, code: "c2pa-unparsed", "C2PA box not read: \(why)", offset: items[store].offset))
        items[store].isUnknown = true
        provenance.append(ProvenanceManifest(item: store, binding: .unchecked("its manifest store was not read")))
    }
}

extension ItemCollector {
    /// Reads a top-level `jumb` box (JPEG XL, HEIF) that is a C2PA manifest store, below its item `store`.
    mutating func c2paJUMB(_ box: Box, store: Int, source: any ByteSource) throws {
        guard box.size <= Int64(JPEGJUMBF.maxBox) else {
            return unread(store, "larger than \(JPEGJUMBF.maxBox) bytes")
        }
        let bytes = try source.read(at: box.offset, count: Int(box.size))
        try c2pa(bytes, store: store, placement: .contiguous(box.offset), source: source)
    }
}
