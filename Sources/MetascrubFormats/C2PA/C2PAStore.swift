// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// A C2PA manifest store read from its JUMBF bytes: the manifests (the last is the active one, the file's own;
/// the others belong to ingredients), each with its assertions, claim and signature.
struct C2PAStore: Sendable {
    struct Assertion: Sendable {
        enum Kind: Sendable { case json, cbor, file, other }
        var label: String
        var kind: Kind
        /// The payload (JSON text, CBOR item, embedded file's bytes), as offsets into the JUMBF bytes.
        var payload: Range<Int>
        var range: Range<Int>
    }

    struct Manifest: Sendable {
        var label: String
        var range: Range<Int>
        var assertions: [Assertion]
        var claim: (range: Range<Int>, generator: String?, alg: String?)?
        var signature: Range<Int>?
        /// Who signed it, from the certificate in its COSE signature.
        var signer: C2PASigner?
    }

    /// The file's hard binding as its active manifest's `c2pa.hash.data` states it.
    struct DataHash: Sendable {
        var exclusions: [Range<Int64>]
        var alg: String
        var hash: [UInt8]
    }

    /// The bytes of the JUMBF superbox; every range above is into these.
    var bytes: [UInt8]
    var manifests: [Manifest]

    static func parse(_ bytes: [UInt8], origin: Int64, path: String) throws -> C2PAStore {
        let root = try JUMBFBox.parse(bytes, origin: origin, path: path)
        guard root.typeCode == "c2pa" else {
            throw MetascrubError.malformed(format: "C2PA", path: path, offset: origin,
                                           reason: "JUMBF box is not a C2PA manifest store")
        }
        let manifests = root.children.filter { $0.typeCode == "c2ma" || $0.typeCode == "c2um" }.map { box in
            Manifest(label: box.label ?? "manifest", range: box.range,
                     assertions: box.child("c2as")?.children.map { assertion($0) } ?? [],
                     claim: box.child("c2cl").map { claim($0, bytes: bytes, origin: origin) },
                     signature: box.child("c2cs")?.range,
                     signer: box.child("c2cs").flatMap { signer($0, bytes: bytes, origin: origin) })
        }
        return C2PAStore(bytes: bytes, manifests: manifests)
    }

    private static func assertion(_ box: JUMBFBox) -> Assertion {
        let content = box.contents.first { $0.type != "c2sh" && $0.type != "bfdb" }
        let kind: Assertion.Kind = switch content?.type {
        case "json": .json
        case "cbor": .cbor
        case "bidb": .file
        default: .other
        }
        return Assertion(label: box.label ?? "assertion", kind: kind, payload: content?.payload ?? box.range,
                         range: box.range)
    }

    private static func claim(
        _ box: JUMBFBox, bytes: [UInt8], origin: Int64
    ) -> (range: Range<Int>, generator: String?, alg: String?) {
        guard let content = box.contents.first(where: { $0.type == "cbor" }),
              let value = try? CBORReader.decode(Array(bytes[content.payload]),
                                                 origin: origin + Int64(content.payload.lowerBound), path: "c2pa.claim")
        else { return (box.range, nil, nil) }
        let generator = value["claim_generator"]?.text
            ?? value["claim_generator_info"].flatMap { info in (info.array?.first ?? info)["name"]?.text }
        return (box.range, generator, value["alg"]?.text)
    }

    private static func signer(_ box: JUMBFBox, bytes: [UInt8], origin: Int64) -> C2PASigner? {
        guard let content = box.contents.first(where: { $0.type == "cbor" }) else { return nil }
        return C2PASigner.read(Array(bytes[content.payload]), origin: origin + Int64(content.payload.lowerBound),
                               path: "c2pa.signature")
    }

    var active: Manifest? { manifests.last }

    /// The active manifest's hard binding (`c2pa.hash.data`, or `c2pa.hash.bmff` in an ISOBMFF file), or why
    /// there is none to check.
    func hardBinding(origin: Int64) -> Result<any HardBinding, BindingProblem> {
        guard let manifest = active else { return .failure(.none("no manifest")) }
        guard let assertion = manifest.assertions.first(where: {
            $0.label.hasPrefix("c2pa.hash.data") || $0.label.hasPrefix("c2pa.hash.bmff")
        }) else {
            return .failure(.none("the active manifest has no c2pa.hash.data or c2pa.hash.bmff binding"))
        }
        let at = origin + Int64(assertion.payload.lowerBound)
        guard assertion.kind == .cbor,
              let value = try? CBORReader.decode(Array(bytes[assertion.payload]), origin: at,
                                                 path: assertion.label) else {
            return .failure(.unchecked("its \(assertion.label) does not parse"))
        }
        if assertion.label.hasPrefix("c2pa.hash.bmff") {
            return C2PABMFFHash.parse(value, label: assertion.label, claimAlg: manifest.claim?.alg)
                .map { $0 as any HardBinding }
        }
        guard let hash = value["hash"]?.bytes else {
            return .failure(.unchecked("its c2pa.hash.data does not parse"))
        }
        var exclusions: [Range<Int64>] = []
        for exclusion in value["exclusions"]?.array ?? [] {
            guard let start = exclusion["start"]?.integer, let length = exclusion["length"]?.integer,
                  start >= 0, length >= 0,
                  start <= Int64.max - length else {
                return .failure(.unchecked("its c2pa.hash.data has an exclusion out of range"))
            }
            exclusions.append(start..<start + length)
        }
        let alg = value["alg"]?.text ?? manifest.claim?.alg ?? "sha256"
        return .success(DataHash(exclusions: exclusions.sorted { $0.lowerBound < $1.lowerBound }, alg: alg, hash: hash))
    }

    enum BindingProblem: Error, Sendable {
        case none(String)
        case unchecked(String)
    }
}

/// A manifest's hard binding: a signed hash over the file's bytes, checked against a file.
protocol HardBinding: Sendable {
    var alg: String { get }
    /// Whether the file hashes to the signed digest; nil when the algorithm is not one metascrub computes.
    func matches(_ source: any ByteSource) throws -> Bool?
}

extension C2PABMFFHash: HardBinding {}

extension C2PAStore.DataHash: HardBinding {
    /// Whether the file's bytes outside the exclusions hash to the manifest's digest.
    func matches(_ source: any ByteSource) throws -> Bool? {
        guard alg == "sha256" else { return nil }
        var digest = SHA256()
        var at: Int64 = 0
        for exclusion in exclusions {
            guard exclusion.lowerBound >= at, exclusion.upperBound <= source.size else { return false }
            try digest.feed(at..<exclusion.lowerBound, from: source)
            at = exclusion.upperBound
        }
        try digest.feed(at..<source.size, from: source)
        return digest.finalize() == hash
    }
}
