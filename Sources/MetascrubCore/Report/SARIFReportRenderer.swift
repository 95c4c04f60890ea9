// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// SARIF 2.1.0 for code-scanning dashboards (GitHub, GitLab): one rule per category, one result per finding
/// the policy removes or forbids, the file as the location. `docs/sarif-schema-2.1.0.json` is the OASIS
/// schema the output is tested against.
public struct SARIFReportRenderer: ReportRenderer {
    static let errorRule = "metascrub/error"
    static let reencodeRule = "metascrub/reencode"
    static let notCheckedRule = "metascrub/not-checked"

    /// Where result URIs are relative to: the repository root (`%SRCROOT%`), so GitHub maps them onto the checkout
    /// whatever folder the scan ran in.
    let sourceRoot: SARIFSourceRoot

    public init(sourceRoot: SARIFSourceRoot) { self.sourceRoot = sourceRoot }

    /// Relative to the repository holding the working folder.
    public init() { self.init(sourceRoot: .discover()) }

    public func render(_ report: Report) throws -> String {
        let ruleIDs = Category.allCases.map { "metascrub/\($0.rawValue)" } + [Self.errorRule, Self.reencodeRule, Self.notCheckedRule]
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
            Self.descriptor(
                id: Self.notCheckedRule, name: "DocumentNotChecked",
                short: "A document that may carry metadata was not checked",
                full: "The file is a format metascrub does not read (JPEG 2000, SVG, PDF, an office document, EPUB) but such files commonly carry authors, positions and paths.",
                help: "Check or clean it with a tool for its format, or leave it out of what is published. `metascrub clean --output-dir` leaves it out unless --copy-unsupported.",
                level: "error"),
        ]
        var results: [[String: Any]] = []
        for file in report.files {
            let uri = sourceRoot.uri(file.path)
            // One result per file and rule, its items as related locations: a photo's thirty EXIF tags are one
            // alert to act on, not thirty, and the fingerprint (file and rule) is unique in the run.
            let flagged = file.findings.filter { $0.disposition != .keep && $0.item.parent == nil }
            for category in Category.allCases {
                let items = flagged.filter { $0.item.category == category }
                guard !items.isEmpty else { continue }
                results.append(result(category, items, uri: uri, ruleIDs: ruleIDs, policy: report.policy.name))
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
                    "ruleId": Self.reencodeRule, "ruleIndex": ruleIDs.firstIndex(of: Self.reencodeRule)!, "level": "note",
                    "message": ["text": "re-encoded: \(reencode.summary)"],
                    "locations": [location(uri)],
                    "partialFingerprints": ["metascrub/v2": fingerprint(uri, Self.reencodeRule)],
                    "properties": properties,
                ])
            }
            if let error = file.error {
                results.append([
                    "ruleId": Self.errorRule, "ruleIndex": ruleIDs.firstIndex(of: Self.errorRule)!, "level": "error",
                    "message": ["text": error.message],
                    "locations": [location(uri)],
                    "partialFingerprints": ["metascrub/v2": fingerprint(uri, Self.errorRule)],
                    "properties": ["code": error.code],
                ])
            } else if file.status == .skipped, let reason = file.reason, reason.hasPrefix("not checked: ") {
                results.append([
                    "ruleId": Self.notCheckedRule, "ruleIndex": ruleIDs.firstIndex(of: Self.notCheckedRule)!, "level": "error",
                    "message": ["text": reason],
                    "locations": [location(uri)],
                    "partialFingerprints": ["metascrub/v2": fingerprint(uri, Self.notCheckedRule)],
                ])
            }
        }
        let log: [String: Any] = [
            "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
            "version": "2.1.0",
            "runs": [[
                "tool": ["driver": [
                    "name": report.tool.name, "version": report.tool.version, "semanticVersion": report.tool.version,
                    "fullName": "metascrub: removes privacy-sensitive metadata from media, losslessly (GPL-3.0-or-later; see metascrub(1))",
                    "rules": rules,
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

    private func result(_ category: Category, _ items: [Finding], uri: String, ruleIDs: [String], policy: String) -> [String: Any] {
        let ruleID = "metascrub/\(category.rawValue)"
        let keys = items.map(\.item.key)
        let listed = keys.prefix(5).joined(separator: ", ") + (keys.count > 5 ? " and \(keys.count - 5) more" : "")
        let forbidden = items.contains { $0.disposition == .fail }
        var related: [[String: Any]] = []
        for (index, finding) in items.enumerated() {
            var physical: [String: Any] = ["artifactLocation": artifact(uri)]
            if let offset = finding.item.offset, offset >= 0 {
                var region: [String: Any] = ["byteOffset": offset]
                if let length = finding.item.length, length > 0 { region["byteLength"] = length }
                physical["region"] = region
            }
            related.append([
                "id": index + 1, "physicalLocation": physical,
                "message": ["text": "\(finding.item.key) at \(finding.item.location): \(finding.disposition.rawValue)"],
            ])
        }
        let properties: [[String: Any]] = items.map { finding in
            ["key": finding.item.key, "location": finding.item.location, "action": finding.disposition.rawValue, "rule": finding.rule]
        }
        return [
            "ruleId": ruleID,
            "ruleIndex": ruleIDs.firstIndex(of: ruleID)!,
            "level": forbidden ? "error" : "warning",
            "message": ["text": "\(items.count) \(category.rawValue) metadata item(s) the \(policy) policy \(forbidden ? "forbids" : "removes"): \(listed)"],
            "locations": [location(uri)],
            "relatedLocations": related,
            // Stable across runs and machines: the file and the rule, never a value, an offset or a time.
            "partialFingerprints": ["metascrub/v2": fingerprint(uri, ruleID)],
            "properties": ["items": properties],
        ]
    }

    private func fingerprint(_ uri: String, _ rule: String) -> String { SHA256.hex(Array("\(uri)\u{0}\(rule)".utf8)) }

    /// The file as a whole: a media file has no lines, so the region is its first line, where code-scanning
    /// dashboards anchor an alert; the byte ranges of the items are in the related locations.
    private func location(_ uri: String) -> [String: Any] {
        ["physicalLocation": ["artifactLocation": artifact(uri), "region": ["startLine": 1]]]
    }

    private func artifact(_ uri: String) -> [String: Any] {
        uri.hasPrefix("file:") ? ["uri": uri] : ["uri": uri, "uriBaseId": "%SRCROOT%"]
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
