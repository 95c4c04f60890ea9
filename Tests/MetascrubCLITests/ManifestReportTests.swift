// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import XCTest

/// The report's account of each C2PA manifest (`manifests`): claim generator, signer (the signing certificate's
/// subject), actions and the hard binding before and after the clean, judged against what the C2PA SDK's own Reader
/// says of the same file (`scripts/fixtures/c2pa_describe.py`). Names appear only under `--show-values`; every
/// report here is validated against docs/report.schema.json by the harness.
final class ManifestReportTests: XCTestCase {
    var tmp = ""

    override func setUp() { tmp = Harness.makeTemp("c2pa-report") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: tmp) }

    func sdk(_ path: String, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        let script = Harness.repo.appendingPathComponent("scripts/fixtures/c2pa_describe.py").path
        let r = Harness.exec("python3", [script, path], cwd: tmp)
        guard r.status == 0 else {
            XCTFail("c2pa-python is missing (scripts/install-deps installs it): \(r.stderr)", file: file, line: line)
            throw Harness.Missing(what: "c2pa-python")
        }
        return Harness.json(r.stdout)
    }

    func manifests(_ result: Harness.Result) -> [[String: Any]] {
        let file = (Harness.json(result.stdout)["files"] as? [[String: Any]])?.first ?? [:]
        return file["manifests"] as? [[String: Any]] ?? []
    }

    /// Generator, signer and actions are the SDK's, for every container; the binding is valid before and after a
    /// clean that keeps the manifest.
    func testSignerGeneratorAndActionsMatchTheSDK() throws {
        try Harness.requireBinary()
        for name in ["signed-plain.jpg", "signed.png", "signed.webp", "signed.mp4", "signed.heic", "signed.jxl"] {
            let input = Harness.fixture("c2pa/\(name)")
            let expected = try sdk(input)
            let r = Harness.metascrub(["scan", "--json", "--show-values", "--policy", "location", input])
            let active = try XCTUnwrap(manifests(r).first { $0["active"] as? Bool == true }, "\(name): \(r.out)")
            let signer = active["signer"] as? [String: Any] ?? [:]
            XCTAssertEqual(signer["common_name"] as? String, expected["signer"] as? String, name)
            XCTAssertEqual(signer["organization"] as? String, expected["issuer"] as? String, name)
            XCTAssertEqual(active["claim_generator"] as? String, expected["generator"] as? String, name)
            XCTAssertEqual(active["actions"] as? [String], expected["actions"] as? [String], name)
            XCTAssertEqual(active["binding_before"] as? String, "valid", name)
            XCTAssertNil(active["binding_after"], "\(name): a scan writes nothing")
        }
        let out = tmp + "/out.jpg"
        let kept = Harness.metascrub(["clean", "--json", "--policy", "location",
                                      Harness.fixture("c2pa/signed-plain.jpg"), "--output", out])
        XCTAssertEqual(kept.status, 0, kept.out + kept.stderr)
        let active = try XCTUnwrap(manifests(kept).first)
        XCTAssertEqual(active["binding_before"] as? String, "valid")
        XCTAssertEqual(active["binding_after"] as? String, "valid")
    }

    /// Without `--show-values` the report says a manifest is there and how its binding fares, but names nobody.
    func testNamesOnlyWithShowValues() throws {
        try Harness.requireBinary()
        let r = Harness.metascrub(["scan", "--json", "--policy", "location", Harness.fixture("c2pa/signed.jpg")])
        let listed = manifests(r)
        XCTAssertEqual(listed.count, 1, "the file's own manifest (its ingredient carries none): \(r.out)")
        for manifest in listed {
            for name in ["signer", "claim_generator", "actions"] { XCTAssertNil(manifest[name], name) }
        }
        XCTAssertFalse(r.out.contains("CANARY-C2PA-SIGNER"), r.out)
        XCTAssertEqual(listed.filter { $0["active"] as? Bool == true }.first?["binding_before"] as? String, "valid")
    }

    /// A clean that changes bytes the signature covers: valid before, removed after.
    func testBindingAfterAManifestIsRemoved() throws {
        try Harness.requireBinary()
        let r = Harness.metascrub(["clean", "--json", "--policy", "location",
                                   Harness.fixture("c2pa/signed-exif-gps.jpg"), "--output", tmp + "/out.jpg"])
        XCTAssertEqual(r.status, 0, r.out + r.stderr)
        let active = try XCTUnwrap(manifests(r).first)
        XCTAssertEqual(active["binding_before"] as? String, "valid")
        XCTAssertEqual(active["binding_after"] as? String, "removed")
    }
}
