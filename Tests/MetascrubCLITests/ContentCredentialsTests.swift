// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import XCTest

/// Content Credentials (C2PA): files signed by c2pa-python (`scripts/fixtures/parts/73-c2pa.sh`), judged by the
/// C2PA SDK's own Reader (`scripts/fixtures/c2pa_fx.py check`): a manifest stays only where the policy keeps it,
/// nothing in it is removed and its signature still covers the cleaned file; otherwise it goes and the report
/// says why, or under `provenance: fail` the file is refused.
final class ContentCredentialsTests: XCTestCase {
    var tmp = ""

    override func setUp() { tmp = Harness.makeTemp("c2pa") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: tmp) }

    /// The SDK's verdict on a file: its validation state and failure codes, or "none" without a manifest.
    struct Verdict {
        var state: String
        var failures: [String]
        /// Valid in the SDK's sense; our test signer is not on its trust list, which is the one failure allowed.
        var valid: Bool { (state == "Valid" || state == "Trusted") && failures.allSatisfy { $0 == "signingCredential.untrusted" } }
    }

    func c2paReader(_ path: String, file: StaticString = #filePath, line: UInt = #line) throws -> Verdict {
        let r = Harness.exec("python3", [Harness.repo.appendingPathComponent("scripts/fixtures/c2pa_fx.py").path, "check", path],
                             cwd: tmp)
        guard r.status == 0 else {
            XCTFail("c2pa-python is missing (scripts/install-deps installs it): \(r.stderr)", file: file, line: line)
            throw Harness.Missing(what: "c2pa-python")
        }
        let json = Harness.json(r.stdout)
        return Verdict(state: json["state"] as? String ?? "?", failures: json["failures"] as? [String] ?? [])
    }

    func policy(_ name: String, _ extra: String) throws -> String {
        let path = "\(tmp)/\(name).yaml"
        let base = try String(contentsOf: Harness.repo.appendingPathComponent("policies/location.yaml"), encoding: .utf8)
        try (base.replacingOccurrences(of: "provenance: keep-valid\n", with: "").replacingOccurrences(of: "name: location", with: "name: \(name)")
             + extra).write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func fileReport(_ result: Harness.Result) -> [String: Any] {
        ((Harness.json(result.stdout)["files"] as? [[String: Any]])?.first) ?? [:]
    }

    /// The fixtures themselves are valid to the SDK: otherwise nothing below means anything.
    func testFixturesAreValidToTheC2PAReader() throws {
        for name in ["signed.jpg", "signed.png", "signed.mp4", "signed.heic", "signed.webp", "signed.jxl", "signed.avif",
                     "signed-exif-gps.jpg", "signed-plain.jpg"] {
            let verdict = try c2paReader(Harness.fixture("c2pa/\(name)"))
            XCTAssertTrue(verdict.valid, "\(name): \(verdict)")
        }
    }

    /// (a) A signed photo with nothing else to remove, under `location` (provenance kept, keep-valid): the manifest
    /// stays and the SDK validates the output.
    func testKeptManifestStillValidates() throws {
        try Harness.requireBinary()
        let out = tmp + "/out.jpg"
        let r = Harness.metascrub(["clean", Harness.fixture("c2pa/signed-plain.jpg"), "--policy", "location", "--output", out, "--json"])
        XCTAssertEqual(r.status, 0, r.out + r.stderr)
        let findings = fileReport(r)["findings"] as? [[String: Any]] ?? []
        let store = try XCTUnwrap(findings.first { $0["key"] as? String == "jumbf:c2pa" })
        XCTAssertEqual(store["action"] as? String, "keep", "\(store)")
        XCTAssertTrue(try c2paReader(out).valid, "the kept manifest must still validate")
        XCTAssertEqual(Harness.data(out), Harness.data(Harness.fixture("c2pa/signed-plain.jpg")))
    }

    /// (b) A clean that changes bytes the signature covers (EXIF GPS outside the manifest, under `location`): the
    /// manifest goes, the report says why, and the output has no manifest for the SDK to find.
    func testCleanThatChangesCoveredBytesRemovesTheManifest() throws {
        try Harness.requireBinary()
        let out = tmp + "/out.jpg"
        let r = Harness.metascrub(["clean", Harness.fixture("c2pa/signed-exif-gps.jpg"), "--policy", "location", "--output", out, "--json"])
        XCTAssertEqual(r.status, 0, r.out + r.stderr)
        let report = fileReport(r)
        let notes = (report["notes"] as? [[String: Any]] ?? []).filter { $0["code"] as? String == "provenance-removed" }
        XCTAssertEqual(notes.count, 1, "\(report["notes"] ?? "")")
        XCTAssertTrue((notes.first?["message"] as? String ?? "").contains("its signature covers bytes this clean changes"), "\(notes)")
        XCTAssertEqual(try c2paReader(out).state, "none", "the manifest must be gone, not left invalid")
        // The rest of what location keeps is still there (exiftool, an independent reader).
        let make = Harness.exec("exiftool", ["-s3", "-Make", "-GPSLatitude", out], cwd: tmp).out
        XCTAssertEqual(make.trimmingCharacters(in: .whitespacesAndNewlines), "CanaryMake")
    }

    /// A manifest that carries a position goes under `location`, saying so.
    func testManifestCarryingAPositionIsRemoved() throws {
        try Harness.requireBinary()
        for name in ["signed.jpg", "signed.png", "signed.webp", "signed.heic", "signed.mp4", "signed.jxl", "signed.avif"] {
            let out = "\(tmp)/\(name)"
            let r = Harness.metascrub(["clean", Harness.fixture("c2pa/\(name)"), "--policy", "location", "--output", out, "--json"])
            XCTAssertEqual(r.status, 0, "\(name): \(r.out) \(r.stderr)")
            let findings = fileReport(r)["findings"] as? [[String: Any]] ?? []
            let store = findings.first { $0["key"] as? String == "jumbf:c2pa" }
            XCTAssertEqual(store?["action"] as? String, "remove", name)
            XCTAssertTrue((store?["rule"] as? String ?? "").contains("it carries a position"), "\(name): \(store ?? [:])")
            XCTAssertEqual(try c2paReader(out).state, "none", name)
            let bytes = try XCTUnwrap(Harness.data(out))
            for canary in ["CANARY-C2PA-PLACE", "CANARY-C2PA-AUTHOR", "48,51.504N"] {
                XCTAssertNil(bytes.range(of: Data(canary.utf8)), "\(name): \(canary) left")
            }
        }
    }

    /// (c) `provenance: fail` refuses a clean that would break a signature, and writes nothing.
    func testProvenanceFailRefuses() throws {
        try Harness.requireBinary()
        let policy = try policy("keep-signed", "provenance: fail\n")
        let out = tmp + "/out.jpg"
        let r = Harness.metascrub(["clean", Harness.fixture("c2pa/signed-exif-gps.jpg"), "--policy", policy, "--output", out,
                                   "--json"])
        XCTAssertEqual(r.status, 3, r.out + r.stderr)
        XCTAssertFalse(Harness.exists(out))
        let notes = fileReport(r)["notes"] as? [[String: Any]] ?? []
        let refused = notes.first { $0["code"] as? String == "provenance-refused" }
        XCTAssertTrue((refused?["message"] as? String ?? "").contains("its signature covers bytes this clean changes"), "\(notes)")
        // The same policy keeps a manifest it need not break.
        let plain = Harness.metascrub(["clean", Harness.fixture("c2pa/signed-plain.jpg"), "--policy", policy, "--output", out])
        XCTAssertEqual(plain.status, 0, plain.out + plain.stderr)
        XCTAssertTrue(try c2paReader(out).valid)
    }

    /// `scan -v` lists the assertions as items with their decisions.
    func testScanListsAssertionsWithDecisions() throws {
        try Harness.requireBinary()
        let r = Harness.metascrub(["scan", "-v", "--policy", "location", Harness.fixture("c2pa/signed.jpg")])
        XCTAssertEqual(r.status, 1, r.out + r.stderr)
        for key in ["jumbf:c2pa", "c2pa:manifest", "c2pa:claim", "c2pa:signature", "c2pa:c2pa.actions.v2", "c2pa:c2pa.hash.data",
                    "c2pa:stds.exif/exif:GPSLatitude", "c2pa:stds.schema-org.CreativeWork/author",
                    "c2pa:stds.schema-org.CreativeWork/locationCreated", "c2pa:c2pa.thumbnail.ingredient", "c2pa:c2pa.ingredient.v3"] {
            XCTAssertTrue(r.out.contains(key), "\(key) not listed:\n\(r.out)")
        }
        XCTAssertFalse(r.out.contains("CANARY-C2PA"), "values only with --show-values")
        let values = Harness.metascrub(["scan", "-v", "--show-values", "--policy", "location", Harness.fixture("c2pa/signed.jpg")])
        XCTAssertTrue(values.out.contains("CANARY-C2PA-AUTHOR"), values.out)
        XCTAssertTrue(values.out.contains("c2pa.created"), values.out)
    }

    /// `provenance: remove` removes a manifest the rules would keep; strict removes every manifest anyway.
    func testProvenanceRemoveAndStrict() throws {
        try Harness.requireBinary()
        let policy = try policy("drop-signed", "provenance: remove\n")
        for (policy, name) in [(policy, "signed-plain.jpg"), ("strict", "signed.png")] {
            let out = "\(tmp)/\(name)"
            let r = Harness.metascrub(["clean", Harness.fixture("c2pa/\(name)"), "--policy", policy, "--output", out])
            XCTAssertEqual(r.status, 0, r.out + r.stderr)
            XCTAssertEqual(try c2paReader(out).state, "none", name)
        }
    }
}
