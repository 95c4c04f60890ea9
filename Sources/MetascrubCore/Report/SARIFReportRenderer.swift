// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// SARIF 2.1.0 for code-scanning dashboards: one rule per category, one result per finding the policy
/// removes or forbids, the file as the location.
public struct SARIFReportRenderer: ReportRenderer {
    public init() {}

    public func render(_ report: Report) throws -> String {
        let rules: [[String: Any]] = Category.allCases.map { category in
            [
                "id": "metascrub/\(category.rawValue)",
                "name": category.rawValue,
                "shortDescription": ["text": "Metadata: \(category.summary)"],
                "help": ["text": "Run `metascrub clean` on the file, or change the policy for the \(category.rawValue) category."],
            ]
        } + [[
            "id": "metascrub/error",
            "name": "error",
            "shortDescription": ["text": "The file could not be read or cleaned"],
            "help": ["text": "The file is malformed or of a format metascrub cannot clean."],
        ]]
        var results: [[String: Any]] = []
        for file in report.files {
            for finding in file.findings where finding.disposition != .keep && finding.item.parent == nil {
                let fingerprint = SHA256.hex(Array("\(file.path)\u{0}\(finding.item.key)\u{0}\(finding.item.location)".utf8))
                results.append([
                    "ruleId": "metascrub/\(finding.item.category.rawValue)",
                    "level": finding.disposition == .fail ? "error" : "warning",
                    "message": ["text": "\(finding.item.key) (\(finding.item.category.rawValue)) at \(finding.item.location): policy says \(finding.disposition.rawValue)"],
                    "locations": [location(file.path)],
                    "partialFingerprints": ["metascrub/v1": fingerprint],
                ])
            }
            if let error = file.error {
                results.append([
                    "ruleId": "metascrub/error", "level": "error", "message": ["text": error.message],
                    "locations": [location(file.path)],
                    "partialFingerprints": ["metascrub/v1": SHA256.hex(Array("\(file.path)\u{0}error".utf8))],
                ])
            }
        }
        let log: [String: Any] = [
            "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
            "version": "2.1.0",
            "runs": [[
                "tool": ["driver": [
                    "name": report.tool.name, "version": report.tool.version,
                    "informationUri": "https://example.invalid/metascrub", "rules": rules,
                ]],
                "results": results,
                "properties": ["policy": report.policy.name, "policyDigest": report.policy.digest],
            ]],
        ]
        let data = try JSONSerialization.data(withJSONObject: log, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    private func location(_ path: String) -> [String: Any] {
        ["physicalLocation": ["artifactLocation": ["uri": path]]]
    }
}
