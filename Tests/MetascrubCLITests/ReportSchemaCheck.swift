// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import XCTest

/// Every JSON report a CLI test makes (on standard output, or written by `--report *.json`) is validated against
/// docs/report.schema.json with an independent validator (python3-jsonschema), so the published schema cannot
/// drift from what reports really carry.
enum ReportSchemaCheck {
    static let schema = Harness.repo.appendingPathComponent("docs/report.schema.json").path

    /// Called with every run of the binary: finds the JSON reports it produced and validates them.
    static func check(_ args: [String], stdout: Data, cwd: String?, file: StaticString = #filePath, line: UInt = #line) {
        var reports: [(String, Data)] = []
        if stdout.first == UInt8(ascii: "{"), let object = try? JSONSerialization.jsonObject(with: stdout) as? [String: Any],
           object["schema_version"] != nil {
            reports.append(("standard output of \(args.joined(separator: " "))", stdout))
        }
        if let index = args.firstIndex(of: "--report"), index + 1 < args.count, args[index + 1].lowercased().hasSuffix(".json"),
           let data = FileManager.default.contents(atPath: resolve(args[index + 1], cwd)), !data.isEmpty {
            reports.append((args[index + 1], data))
        }
        for (name, data) in reports {
            let problems = validate(data)
            XCTAssertEqual(problems, "", "\(name) does not validate against docs/report.schema.json", file: file, line: line)
        }
    }

    static func resolve(_ path: String, _ cwd: String?) -> String {
        guard let cwd, !path.hasPrefix("/") else { return path }
        return (cwd as NSString).appendingPathComponent(path)
    }

    /// The validator's complaints, "" when the report is valid.
    static func validate(_ report: Data) -> String {
        let path = NSTemporaryDirectory() + "metascrub-report-\(UUID().uuidString).json"
        FileManager.default.createFile(atPath: path, contents: report)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let script = """
            import json, sys, jsonschema
            schema = json.load(open(sys.argv[1]))
            report = json.load(open(sys.argv[2]))
            errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(report), key=lambda e: list(e.path))
            for e in errors[:5]:
                print("/".join(map(str, e.path)) + ": " + e.message[:300])
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, schema, path]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = out
        do { try process.run() } catch { return "python3 could not run: \(error)" }
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return process.terminationStatus == 0 ? text : "validator failed (\(process.terminationStatus)): \(text)"
    }
}
