// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// SARIF 2.1.0 for code-scanning dashboards (GitHub, GitLab): one rule per category, one result per finding
/// the policy removes or forbids, the file as the location. `docs/sarif-schema-2.1.0.json` is the OASIS
/// schema the output is tested against.
public struct SARIFReportRenderer: ReportRenderer {
    public init() {}

    static let errorRule = "metascrub/error"
    static let reencodeRule = "metascrub/reencode"

    public func render(_ report: Report) throws -> String {
        let ruleIDs = Category.allCases.map { "metascrub/\($0.rawValue)" } + [Self.errorRule, Self.reencodeRule]
        let rules: [[String: Any]] = Category.allCases.map(rule) + [
            Self.descriptor(
                id: Self.errorRule, name: "UnreadableOrUncleanableFile",
                short: "The file could not be read or cleaned",
                full: "metascrub could not parse the file, or the policy forbids something in it, so nothing was checked or written for it.",
                help: "Run `metascrub scan FILE` to see the error. A malformed or unsupported file cannot be vouched for; remove it or convert it to a format metascrub cleans.",
                level: "error"),
            Self.descriptor(
                id: Self.reencodeRule, name: "ReencodedImage",
                short: "The cleaned image was decoded and encoded again",
                full: "Remuxing could not do what the policy asked (a conversion, or an orientation bake), so the pixels were re-encoded; the result's fidelity to the original's displayed image is in the result's properties.",
                help: "Re-encoding happens only with `reencode: true` in the policy or `--convert`. The result was checked against the source's displayed render (PSNR at least the policy's min-psnr).",
                level: "note"),
        ]
        var results: [[String: Any]] = []
        for file in report.files {
            let uri = Self.uri(file.path)
            for finding in file.findings where finding.disposition != .keep && finding.item.parent == nil {
                let ruleID = "metascrub/\(finding.item.category.rawValue)"
                // Stable across runs and machines: what and where, never a value or a time.
                let fingerprint = SHA256.hex(Array("\(uri)\u{0}\(finding.item.key)\u{0}\(finding.item.location)".utf8))
                results.append([
                    "ruleId": ruleID,
                    "ruleIndex": ruleIDs.firstIndex(of: ruleID)!,
                    "level": finding.disposition == .fail ? "error" : "warning",
                    "message": ["text": "\(finding.item.key) (\(finding.item.category.rawValue) metadata) at \(finding.item.location): the \(report.policy.name) policy says \(finding.disposition.rawValue)"],
                    "locations": [location(uri)],
                    "partialFingerprints": ["metascrub/v1": fingerprint],
                ])
            }
            if let reencode = file.reencode {
                var properties: [String: Any] = [
                    "reason": reencode.reason, "from": reencode.from, "to": reencode.to, "decoder": reencode.decoder,
                    "encoder": reencode.encoder, "settings": reencode.settings, "ssim": reencode.ssim,
                    "identical": reencode.identical, "minPsnrDb": reencode.minimumPSNR,
                ]
                if let psnr = reencode.psnr { properties["psnrDb"] = psnr }
                if let output = file.output { properties["output"] = output }
                results.append([
                    "ruleId": Self.reencodeRule, "ruleIndex": ruleIDs.count - 1, "level": "note",
                    "message": ["text": "re-encoded: \(reencode.summary)"],
                    "locations": [location(uri)],
                    "partialFingerprints": ["metascrub/v1": SHA256.hex(Array("\(uri)\u{0}reencode\u{0}\(reencode.to)".utf8))],
                    "properties": properties,
                ])
            }
            if let error = file.error {
                results.append([
                    "ruleId": Self.errorRule, "ruleIndex": ruleIDs.count - 2, "level": "error",
                    "message": ["text": error.message],
                    "locations": [location(uri)],
                    "partialFingerprints": ["metascrub/v1": SHA256.hex(Array("\(uri)\u{0}error\u{0}\(error.code)".utf8))],
                ])
            }
        }
        let log: [String: Any] = [
            "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
            "version": "2.1.0",
            "runs": [[
                "tool": ["driver": [
                    "name": report.tool.name, "version": report.tool.version, "semanticVersion": report.tool.version,
                    "informationUri": "https://example.invalid/metascrub", "rules": rules,
                ]],
                "results": results,
                "properties": ["policy": report.policy.name, "policyDigest": report.policy.digest],
            ]],
        ]
        let data = try JSONSerialization.data(withJSONObject: log, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    private func rule(_ category: Category) -> [String: Any] {
        let help = "This file carries \(category.rawValue) metadata (\(category.summary)) that the policy removes. "
            + "Run `metascrub clean --in-place FILE` (or `metascrub clean --staged` before a commit), or change the policy's "
            + "`categories: { \(category.rawValue): keep }` if this metadata is meant to be published."
        var rule = Self.descriptor(
            id: "metascrub/\(category.rawValue)",
            name: category.rawValue.prefix(1).uppercased() + category.rawValue.dropFirst() + "Metadata",
            short: "Media file carries \(category.rawValue) metadata",
            full: "Metadata of the \(category.rawValue) category: \(category.summary).",
            help: help, level: "warning")
        rule["properties"] = ["tags": ["privacy", "metadata", category.rawValue]]
        return rule
    }

    /// A SARIF reportingDescriptor; the help is plain text that reads the same as markdown.
    private static func descriptor(id: String, name: String, short: String, full: String, help: String, level: String) -> [String: Any] {
        [
            "id": id,
            "name": name,
            "shortDescription": ["text": short],
            "fullDescription": ["text": full],
            "help": ["text": help, "markdown": help],
            "defaultConfiguration": ["level": level],
        ]
    }

    private func location(_ uri: String) -> [String: Any] {
        var artifact: [String: Any] = ["uri": uri]
        // Relative paths are relative to where the scan ran: the checkout root in CI.
        if !uri.hasPrefix("file:") { artifact["uriBaseId"] = "%SRCROOT%" }
        return ["physicalLocation": ["artifactLocation": artifact]]
    }

    /// A file path as a URI reference: relative paths stay relative (`./` dropped), absolute ones become
    /// `file://` URIs; every byte outside the unreserved set and `/` is percent-encoded.
    static func uri(_ path: String) -> String {
        var allowed = CharacterSet.alphanumerics.intersection(CharacterSet(charactersIn: Unicode.Scalar(0)..<Unicode.Scalar(128)))
        allowed.insert(charactersIn: "-._~/")
        var p = path
        while p.hasPrefix("./") { p.removeFirst(2) }
        var encoded = ""
        for byte in p.utf8 {
            let scalar = Unicode.Scalar(byte)
            if byte < 128, allowed.contains(scalar) { encoded.unicodeScalars.append(scalar) }
            else { encoded += String(format: "%%%02X", byte) }
        }
        return path.hasPrefix("/") ? "file://" + encoded : encoded
    }
}
