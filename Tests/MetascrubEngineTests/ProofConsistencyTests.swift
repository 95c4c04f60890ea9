// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
@testable import Metascrub
import MetascrubCore
import MetascrubFormats
import XCTest

/// The residue proof pairs decision `i` with scanned item `i`. When the two lists disagree the proof cannot tell
/// removed items from kept ones: that is a bug, and it must refuse the file (never skip the proof and write).
final class ProofConsistencyTests: XCTestCase {
    func testMismatchedItemsAndDecisionsThrowInsteadOfSkippingTheProof() throws {
        let item = MetadataItem(key: "exif:Artist", category: .identity, location: "IFD0", offset: 0, length: 12,
                                value: "CANARY-ARTIST")
        let findings = [Finding(item: item, disposition: .remove, rule: "identity")]
        let bytes = MemoryByteSource(Array("CANARY-ARTIST and more".utf8))
        var verification = Verification(rescan: .passed, remaining: [], content: "", contentResult: .passed)
        let verifier = Verifier(options: ProcessingOptions(policy: try PolicyCatalog.builtin("strict")))
        XCTAssertThrowsError(try verifier.proveNoResidue(original: bytes, items: [item, item], findings: findings,
                                                         cleaned: bytes, after: [], verification: &verification)) { error in
            guard case .inconsistent(let stage, let reason)? = error as? MetascrubError else {
                return XCTFail("not a typed inconsistency: \(error)")
            }
            XCTAssertEqual(stage, "residue proof")
            XCTAssertTrue(reason.contains("2 scanned items but 1 decisions"), reason)
            XCTAssertEqual((error as? MetascrubError)?.code, "internal-error")
        }
        // The same lists, matched, run the proof and find the removed value left in the bytes.
        XCTAssertThrowsError(try verifier.proveNoResidue(original: bytes, items: [item], findings: findings,
                                                         cleaned: bytes, after: [], verification: &verification)) { error in
            XCTAssertEqual((error as? ProofFailure)?.error.code, "verification-failed")
            XCTAssertEqual((error as? ProofFailure)?.verification?.remaining, ["exif:Artist"])
        }
    }

    /// A handler whose settle loses a decision: the clean is refused as an internal error before anything is
    /// planned, and the original is left as it was.
    func testASettleThatLosesADecisionRefusesTheFile() async throws {
        let dir = EngineFixture.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let input = dir + "/gps-full.jpg"
        try FileManager.default.copyItem(atPath: EngineFixture.path("jpeg/gps-full.jpg"), toPath: input)
        let original = FileManager.default.contents(atPath: input)
        var options = ProcessingOptions(policy: try PolicyCatalog.builtin("strict"))
        let real = try XCTUnwrap(FormatRegistry.detect(Array(try XCTUnwrap(original).prefix(Magic.headLength))))
        options.formats = [FormatEntry(real.format, detect: real.detect, handler: DecisionDropper(inner: JPEGFormat()),
                                       capabilities: real.capabilities)]
        let report = await Engine(options: options, jobs: 1).clean([input], output: .inPlace)
        let file = try XCTUnwrap(report.files.first)
        XCTAssertEqual(file.status, .error)
        XCTAssertEqual(file.error?.code, "internal-error", file.error?.message ?? "")
        XCTAssertEqual(ExitStatus.forClean(report, exitCodeOnChange: false), .failure)
        XCTAssertEqual(FileManager.default.contents(atPath: input), original, "the original changed")
    }
}

/// Settles like the JPEG handler, then drops the last decision (the bug the count check exists for).
struct DecisionDropper: FormatHandler {
    let inner: JPEGFormat

    func scan(_ input: any ByteSource, options: ScanOptions) throws -> ScanResult<JPEGLayout> {
        try inner.scan(input, options: options)
    }

    func settle(_ findings: [Finding], input: any ByteSource, scan: ScanResult<JPEGLayout>, policy: Policy) throws -> [Finding] {
        Array(try inner.settle(findings, input: input, scan: scan, policy: policy).dropLast())
    }

    func clean(_ input: any ByteSource, scan: ScanResult<JPEGLayout>, plan: CleanPlan, to output: any OutputSink) throws -> CleanResult {
        try inner.clean(input, scan: scan, plan: plan, to: output)
    }

    func verifyContent(original: any ByteSource, _ before: JPEGLayout, cleaned: any ByteSource, _ after: JPEGLayout,
                       result: CleanResult) throws -> ContentCheck {
        try inner.verifyContent(original: original, before, cleaned: cleaned, after, result: result)
    }
}
