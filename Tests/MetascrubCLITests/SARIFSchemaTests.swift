// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import XCTest

/// The SARIF the CLI writes is valid against the OASIS SARIF 2.1.0 JSON schema, both the draft vendored in
/// docs/sarif-schema-2.1.0.json and the errata01 one GitHub code scanning uses (installed by scripts/install-deps),
/// checked by python3-jsonschema, an independent validator.
final class SARIFSchemaTests: XCTestCase {
    static let validator = """
        import json, sys
        import jsonschema
        schema = json.load(open(sys.argv[1]))
        log = json.load(open(sys.argv[2]))
        validator = jsonschema.Draft4Validator if "draft-04" in schema.get("$schema", "") else jsonschema.Draft7Validator
        errors = sorted(validator(schema).iter_errors(log), key=lambda e: list(e.path))
        for e in errors[:10]:
            print("/".join(map(str, e.path)) + ": " + e.message)
        sys.exit(1 if errors else 0)
        """

    /// A python3 that has jsonschema (Debian's python3-jsonschema is for /usr/bin/python3; PATH may start
    /// with another python).
    static var python: String? {
        for candidate in ["python3", "/usr/bin/python3"] {
            if Harness.exec(candidate, ["-c", "import jsonschema"], cwd: "/").status == 0 { return candidate }
        }
        return nil
    }

    /// The OASIS errata01 schema, as scripts/install-deps installs it.
    static let errataSchema = "/usr/local/share/metascrub/sarif-schema-2.1.0-errata01.json"

    func testSARIFIsValidAgainstTheSchemaAndHasStableFingerprints() throws {
        let python = try XCTUnwrap(Self.python, "python3-jsonschema is installed by scripts/install-deps")
        let tmp = Harness.makeTemp("sarif")
        defer { try? FileManager.default.removeItem(atPath: tmp) }
        Harness.copy("jpeg/gps-full.jpg", to: tmp + "/a b/gps full.jpg")
        Harness.copy("jpeg/bad/truncated-header.jpg", to: tmp + "/broken.jpg")
        Harness.copy("jpeg/clean.jpg", to: tmp + "/clean.jpg")
        let failPolicy = tmp + "/fail.yaml"
        try "schema: 1\nname: block-gps\ndefault: remove\ncategories:\n  location: fail\n".write(toFile: failPolicy, atomically: true, encoding: .utf8)
        let script = tmp + "/validate.py"
        try Self.validator.write(toFile: script, atomically: true, encoding: .utf8)
        let schemas = [Harness.repo.appendingPathComponent("docs/sarif-schema-2.1.0.json").path, Self.errataSchema]
        XCTAssertTrue(FileManager.default.fileExists(atPath: Self.errataSchema), "scripts/install-deps installs the errata01 schema")

        for (label, args, cwd) in [
            ("relative paths", ["scan", "--format", "sarif", "."], tmp),
            ("absolute paths", ["scan", "--format", "sarif", tmp], "/"),
            ("a policy that forbids", ["scan", "--format", "sarif", "--policy", failPolicy, "."], tmp),
        ] {
            let r = Harness.metascrub(args, cwd: cwd)
            XCTAssertEqual(r.status, 3, "\(label): findings and a broken file")
            let log = tmp + "/out.sarif"
            try r.stdout.write(to: URL(fileURLWithPath: log))
            for schema in schemas {
                let check = Harness.exec(python, [script, schema, log], cwd: tmp)
                XCTAssertEqual(check.status, 0, "\(label), \(schema): " + check.out + check.stderr)
            }
        }

        let first = Harness.metascrub(["scan", "--format", "sarif", "."], cwd: tmp)
        let json = Harness.json(first.stdout)
        let run = try XCTUnwrap((json["runs"] as? [[String: Any]])?.first)
        let results = try XCTUnwrap(run["results"] as? [[String: Any]])
        let rules = try XCTUnwrap(((run["tool"] as? [String: Any])?["driver"] as? [String: Any])?["rules"] as? [[String: Any]])
        XCTAssertTrue(rules.allSatisfy { (($0["help"] as? [String: Any])?["text"] as? String)?.isEmpty == false }, "every rule has help")
        let findings = results.filter { $0["ruleId"] as? String != "metascrub/error" }
        let flagged = Harness.json(Harness.metascrub(["scan", "--json", "a b/gps full.jpg"], cwd: tmp).stdout)
        let actionable = ((flagged["files"] as? [[String: Any]])?.first?["findings"] as? [[String: Any]] ?? [])
            .filter { $0["action"] as? String != "keep" && $0["parent"] == nil }
        let categories = Set(actionable.compactMap { $0["category"] as? String })
        XCTAssertEqual(findings.count, categories.count, "one result per file and rule")
        XCTAssertEqual(findings.reduce(0) { $0 + (($1["relatedLocations"] as? [[String: Any]])?.count ?? 0) }, actionable.count,
                       "every flagged item is a related location of its result")
        let fingerprints = results.compactMap { ($0["partialFingerprints"] as? [String: String])?["metascrub/v2"] }
        XCTAssertEqual(fingerprints.count, results.count)
        XCTAssertEqual(Set(fingerprints).count, fingerprints.count, "fingerprints are unique")
        for result in results {
            let physical = (result["locations"] as? [[String: Any]])?.first?["physicalLocation"] as? [String: Any]
            XCTAssertEqual((physical?["region"] as? [String: Any])?["startLine"] as? Int, 1, "every result has a region")
        }
        XCTAssertFalse(first.out.contains("example.invalid"))
        // GitHub code scanning's upload rules: version 2.1.0, a named tool, at most 20 runs, 25,000 results per run and
        // 1,000 locations per result, a message on every result, and a ruleId its run's rules define.
        XCTAssertEqual(json["version"] as? String, "2.1.0")
        XCTAssertLessThanOrEqual((json["runs"] as? [Any])?.count ?? 0, 20)
        XCTAssertFalse((((run["tool"] as? [String: Any])?["driver"] as? [String: Any])?["name"] as? String ?? "").isEmpty)
        XCTAssertLessThanOrEqual(results.count, 25_000)
        for result in results {
            XCTAssertFalse(((result["message"] as? [String: Any])?["text"] as? String ?? "").isEmpty, "a message on every result")
            XCTAssertLessThanOrEqual((result["locations"] as? [Any])?.count ?? 0, 1_000)
            XCTAssertLessThanOrEqual((result["relatedLocations"] as? [Any])?.count ?? 0, 1_000)
        }
        for result in results {
            let index = try XCTUnwrap(result["ruleIndex"] as? Int)
            XCTAssertEqual(rules[index]["id"] as? String, result["ruleId"] as? String)
        }
        let uris = Set(results.compactMap { (((($0["locations"] as? [[String: Any]])?.first?["physicalLocation"] as? [String: Any])?["artifactLocation"] as? [String: Any])?["uri"] as? String) })
        XCTAssertEqual(uris, ["a%20b/gps%20full.jpg", "broken.jpg"])
        let second = Harness.metascrub(["scan", "--format", "sarif", "--jobs", "1", "."], cwd: tmp)
        XCTAssertEqual(first.stdout, second.stdout, "byte-identical across runs: stable fingerprints and order")
        XCTAssertFalse(first.out.contains("CANARY"), "no values")
    }

    /// URIs are relative to the repository root whatever folder the scan runs in, never absolute.
    func testSARIFURIsAreRelativeToTheRepositoryRoot() throws {
        try Harness.require("git")
        let repo = Harness.makeTemp("sarif-repo")
        defer { try? FileManager.default.removeItem(atPath: repo) }
        Harness.sh("git init -q .", cwd: repo)
        Harness.copy("jpeg/gps-full.jpg", to: repo + "/site/img/a.jpg")
        let r = Harness.metascrub(["scan", "--format", "sarif", "img"], cwd: repo + "/site")
        XCTAssertEqual(r.status, 1, r.stderr)
        let run = try XCTUnwrap((Harness.json(r.stdout)["runs"] as? [[String: Any]])?.first)
        let results = try XCTUnwrap(run["results"] as? [[String: Any]])
        XCTAssertFalse(results.isEmpty)
        for result in results {
            let physical = (result["locations"] as? [[String: Any]])?.first?["physicalLocation"] as? [String: Any]
            let artifact = try XCTUnwrap(physical?["artifactLocation"] as? [String: Any])
            XCTAssertEqual(artifact["uri"] as? String, "site/img/a.jpg")
            XCTAssertEqual(artifact["uriBaseId"] as? String, "%SRCROOT%")
        }
        XCTAssertFalse(r.out.contains(repo), "the checkout's absolute path is not in the report")
    }
}
