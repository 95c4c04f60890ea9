// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import SwiftASN1

/// Who signed a C2PA manifest: the subject of the first certificate in its COSE_Sign1 signature's `x5chain`
/// header (RFC 9360), the signer's own certificate. A report names the signer so a reader can tell a camera's
/// or an editor's signature from a person's; the certificate itself is parsed by swift-asn1 (pure Swift, so the
/// binary links no further C library).
struct C2PASigner: Sendable, Equatable {
    var commonName: String?
    var organization: String?

    /// COSE header label of the X.509 chain (RFC 9360 §2).
    static let x5chain: Int64 = 33

    /// The signer named by a `c2cs` box's CBOR payload (a tagged or untagged COSE_Sign1), or nil when it names
    /// none; C2PA 2.x puts the chain in the protected header, 1.x in the unprotected one.
    static func read(_ payload: [UInt8], origin: Int64, path: String) -> C2PASigner? {
        guard let sign1 = try? CBORReader.decode(payload, origin: origin, path: path).untagged.array,
              sign1.count == 4 else { return nil }
        let protected = sign1[0].bytes.flatMap { try? CBORReader.decode($0, origin: origin, path: path) }
        guard let chain = protected?[label: x5chain] ?? sign1[1][label: x5chain] else { return nil }
        // One certificate is a byte string; several are an array, the signer's first.
        guard let der = chain.bytes ?? chain.array?.first?.bytes else { return nil }
        return try? C2PASigner(certificate: der)
    }

    /// Reads the subject name of a DER certificate (RFC 5280 §4.1): the common name and organisation, in the
    /// string types a Name may use.
    init(certificate der: [UInt8]) throws {
        let subject = try DER.sequence(try DER.parse(der), identifier: .sequence) { certificate -> ASN1Node in
            guard let tbs = certificate.next() else { throw ASN1Error.invalidASN1Object(reason: "no TBSCertificate") }
            while certificate.next() != nil {}
            return try DER.sequence(tbs, identifier: .sequence) { fields -> ASN1Node in
                _ = try DER.optionalExplicitlyTagged(&fields, tagNumber: 0, tagClass: .contextSpecific) { $0 }
                // serialNumber, signature, issuer, validity, then subject.
                for _ in 0..<4 where fields.next() == nil {
                    throw ASN1Error.invalidASN1Object(reason: "TBSCertificate cut before its subject")
                }
                guard let subject = fields.next() else {
                    throw ASN1Error.invalidASN1Object(reason: "TBSCertificate without a subject")
                }
                while fields.next() != nil {}
                return subject
            }
        }
        guard subject.identifier == .sequence, case .constructed(let names) = subject.content else {
            throw ASN1Error.unexpectedFieldType(subject.identifier)
        }
        for relative in names {
            guard case .constructed(let attributes) = relative.content else { continue }
            for attribute in attributes {
                let (type, value) = try DER.sequence(attribute, identifier: .sequence) { pair in
                    guard let type = pair.next(), let value = pair.next() else {
                        throw ASN1Error.invalidASN1Object(reason: "attribute without a type and value")
                    }
                    return (try ASN1ObjectIdentifier(derEncoded: type), value)
                }
                switch type {
                case Self.commonNameOID: commonName = commonName ?? Self.text(value)
                case Self.organizationOID: organization = organization ?? Self.text(value)
                default: break
                }
            }
        }
    }

    static let commonNameOID: ASN1ObjectIdentifier = [2, 5, 4, 3]
    static let organizationOID: ASN1ObjectIdentifier = [2, 5, 4, 10]

    /// A DirectoryString's text: UTF-8 and the ASCII subsets as they are, BMPString as UTF-16BE.
    private static func text(_ node: ASN1Node) -> String? {
        guard case .primitive(let bytes) = node.content else { return nil }
        switch node.identifier {
        case .utf8String, .printableString, .ia5String, .visibleString, .teletexString:
            return String(decoding: bytes, as: UTF8.self)
        case .bmpString where bytes.count % 2 == 0:
            let units = stride(from: bytes.startIndex, to: bytes.endIndex, by: 2).map {
                UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1])
            }
            return String(decoding: units, as: UTF16.self)
        default: return nil
        }
    }

    /// "Name, Organisation" as a report shows it.
    var description: String {
        [commonName, organization].compactMap { $0 }.joined(separator: ", ")
    }
}

extension CBOR {
    /// The value under an integer key of a map (COSE header labels).
    subscript(label label: Int64) -> CBOR? {
        guard case .map(let pairs) = self else { return nil }
        return pairs.first { $0.key.integer == label }?.value
    }
}
