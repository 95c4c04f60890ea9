// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import XCTest

/// `c2pa.hash.bmff` (HEIF, AVIF, MP4) checked on the original and on the output, judged by the C2PA SDK's own
/// Reader (`scripts/fixtures/c2pa_fx.py check`): where it says a binding holds or breaks, the report says the same,
/// and a manifest is kept only where its binding still holds on the written file.
final class BMFFBindingTests: XCTestCase {
    var tmp = ""

    override func setUp() { tmp = Harness.makeTemp("bmff-binding") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: tmp) }

    static let bmff = ["signed.mp4", "signed.heic", "signed.avif"]

    /// The SDK's validation state and failure codes for a file.
    func sdk(_ path: String, file: StaticString = #filePath,
             line: UInt = #line) throws -> (state: String, failures: [String]) {
        let script = Harness.repo.appendingPathComponent("scripts/fixtures/c2pa_fx.py").path
        let r = Harness.exec("python3", [script, "check", path], cwd: tmp)
        guard r.status == 0 else {
            XCTFail("c2pa-python is missing (scripts/install-deps installs it): \(r.stderr)", file: file, line: line)
            throw Harness.Missing(what: "c2pa-python")
        }
        let json = Harness.json(r.stdout)
        return (json["state"] as? String ?? "?", json["failures"] as? [String] ?? [])
    }

    func activeManifest(_ result: Harness.Result) -> [String: Any] {
        let file = (Harness.json(result.stdout)["files"] as? [[String: Any]])?.first ?? [:]
        return (file["manifests"] as? [[String: Any]] ?? []).first { $0["active"] as? Bool == true } ?? [:]
    }

    /// Everything kept (provenance: keep-valid): nothing changes, the binding holds before and after, and the SDK
    /// validates the output.
    func testKeptManifestHoldsOnTheOutput() throws {
        try Harness.requireBinary()
        let policy = try keepAll()
        for name in Self.bmff {
            let out = "\(tmp)/\(name)"
            let r = Harness.metascrub(["clean", "--json", "--policy", policy, Harness.fixture("c2pa/\(name)"),
                                       "--output", out])
            XCTAssertEqual(r.status, 0, "\(name): \(r.out) \(r.stderr)")
            let active = activeManifest(r)
            XCTAssertEqual(active["binding_before"] as? String, "valid", name)
            XCTAssertEqual(active["binding_after"] as? String, "valid", name)
            let verdict = try sdk(out)
            XCTAssertEqual(verdict.state, "Valid", "\(name): \(verdict)")
        }
    }

    /// A policy that keeps every category, so only the provenance rule can remove a manifest.
    func keepAll() throws -> String {
        let policy = "\(tmp)/keep-all.yaml"
        var yaml = "schema: 1\nname: keep-all\ndefault: keep\nunknown: keep\ncategories:\n"
        for category in ["location", "device", "identity", "time", "software", "content", "embedded", "provenance",
                         "rendering", "structure"] {
            yaml += "  \(category): keep\n"
        }
        yaml += "provenance: keep-valid\n"
        try yaml.write(toFile: policy, atomically: true, encoding: .utf8)
        return policy
    }

    /// One byte of coded media changed: the SDK reports a BMFF hash mismatch, the scan reports the binding invalid,
    /// and a clean that keeps provenance removes the manifest saying why rather than publish a broken one.
    func testChangedMediaBreaksTheBindingForBoth() throws {
        try Harness.requireBinary()
        for name in Self.bmff {
            var bytes = try XCTUnwrap(Harness.data(Harness.fixture("c2pa/\(name)")))
            let mdat = try XCTUnwrap(bytes.range(of: Data("mdat".utf8)), name)
            bytes[mdat.upperBound + 8] ^= 0x01
            let tampered = "\(tmp)/tampered-\(name)"
            try bytes.write(to: URL(fileURLWithPath: tampered))
            let verdict = try sdk(tampered)
            XCTAssertTrue(verdict.failures.contains("assertion.bmffHash.mismatch"), "\(name): \(verdict)")
            let scan = Harness.metascrub(["scan", "--json", "--policy", "location", tampered])
            XCTAssertEqual(activeManifest(scan)["binding_before"] as? String, "invalid", name)
            let out = "\(tmp)/out-\(name)"
            let clean = Harness.metascrub(["clean", "--json", "--policy", try keepAll(), tampered, "--output", out])
            XCTAssertEqual(clean.status, 0, "\(name): \(clean.out) \(clean.stderr)")
            XCTAssertEqual(activeManifest(clean)["binding_after"] as? String, "removed", name)
            XCTAssertTrue(clean.out.contains("its hard binding does not match"), "\(name): \(clean.out)")
            XCTAssertEqual(try sdk(out).state, "none", "\(name): no manifest left to fail")
        }
    }
}
