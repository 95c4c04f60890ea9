// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubCore
import MetascrubFormats
import XCTest

/// The safety net seen failing: for each verification path a cleaner that gets it wrong is put in the format
/// table, and the file must be left exactly as it was, nothing written or left behind, and the run exit 3.
final class VerificationFailureTests: XCTestCase {
    /// Re-scan: the "cleaned" file still carries everything the policy removes.
    func testLeftoverMetadataFailsTheRescan() async {
        let report = await assertRefused("jpeg/gps-full.jpg", FaultyCleaner(JPEGFormat(), .copyInputUnchanged))
        XCTAssertEqual(report?.verification?.rescan, .failed)
        XCTAssertTrue(report?.error?.message.contains("still present after cleaning") ?? false, report?.error?.message ?? "")
    }

    /// Remux comparison: one bit of coded audio changed in the output.
    func testChangedCodedDataFailsTheRemuxComparison() async {
        let report = await assertRefused("audio/id3v23.mp3", FaultyCleaner(MP3Format(), .flipMiddleByte))
        XCTAssertEqual(report?.verification?.rescan, .passed)
        XCTAssertEqual(report?.verification?.contentResult, .failed)
    }

    /// Same-offset comparison (padding formats): one bit of a coded frame changed.
    func testChangedFrameFailsTheSameOffsetComparison() async {
        let report = await assertRefused("video/info.avi", FaultyCleaner(AVIFormat(), .flipMiddleByte))
        XCTAssertEqual(report?.verification?.contentResult, .failed)
    }

    /// Lossless transform: the cleaner says it rotated the image but wrote it unrotated.
    func testUnmadeTransformFailsTheTransformCheck() async {
        let report = await assertRefused("jpeg/orient-6.jpg", FaultyCleaner(JPEGFormat(), .claimTransform))
        XCTAssertEqual(report?.verification?.contentResult, .failed)
    }

    /// Cleans a copy of `fixture` in place with `handler` standing in for its format; checks the refusal.
    @discardableResult
    func assertRefused<H: FormatHandler>(_ fixture: String, _ handler: H, file: StaticString = #filePath, line: UInt = #line) async -> FileReport? {
        let dir = EngineFixture.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let input = dir + "/" + (fixture as NSString).lastPathComponent
        try! FileManager.default.copyItem(atPath: EngineFixture.path(fixture), toPath: input)
        let original = FileManager.default.contents(atPath: input)!

        var options = ProcessingOptions(policy: try! PolicyCatalog.builtin("strict"))
        let head = Array(original.prefix(Magic.headLength))
        guard let real = FormatRegistry.detect(head) else { XCTFail("\(fixture) is not media", file: file, line: line); return nil }
        options.formats = [FormatEntry(real.format, detect: real.detect, handler: handler, capabilities: real.capabilities)]
        let report = await Engine(options: options, jobs: 1).clean([input], output: .inPlace)

        XCTAssertEqual(ExitStatus.forClean(report, exitCodeOnChange: false), .failure, "exit status", file: file, line: line)
        let fileReport = report.files.first
        XCTAssertEqual(fileReport?.status, .error, file: file, line: line)
        XCTAssertEqual(fileReport?.error?.code, "verification-failed", fileReport?.error?.message ?? "no error", file: file, line: line)
        XCTAssertNil(fileReport?.output, "a refused file must not name an output", file: file, line: line)
        XCTAssertEqual(FileManager.default.contents(atPath: input), original, "the original changed", file: file, line: line)
        XCTAssertEqual(try! FileManager.default.contentsOfDirectory(atPath: dir), [(input as NSString).lastPathComponent],
                       "something was left beside the original", file: file, line: line)
        return fileReport
    }
}

/// A cleaner that gets it wrong on purpose, on top of a real handler (which scans, settles and verifies).
struct FaultyCleaner<Inner: FormatHandler>: FormatHandler {
    enum Fault: Sendable {
        /// Writes the input unchanged: every removed item is still there.
        case copyInputUnchanged
        /// Writes the real output with one bit in the middle flipped (inside the coded data of the fixtures used).
        case flipMiddleByte
        /// Writes the real (remuxed) output but reports a lossless transform.
        case claimTransform
    }

    let inner: Inner
    let fault: Fault

    init(_ inner: Inner, _ fault: Fault) {
        self.inner = inner
        self.fault = fault
    }

    func scan(_ input: any ByteSource, options: ScanOptions) throws -> ScanResult<Inner.Layout> {
        try inner.scan(input, options: options)
    }

    func settle(_ findings: [Finding], input: any ByteSource, scan: ScanResult<Inner.Layout>, policy: Policy) throws -> [Finding] {
        try inner.settle(findings, input: input, scan: scan, policy: policy)
    }

    func clean(_ input: any ByteSource, scan: ScanResult<Inner.Layout>, plan: CleanPlan, to output: any OutputSink) throws -> CleanResult {
        switch fault {
        case .copyInputUnchanged:
            try output.copy(from: input, offset: 0, count: input.size)
            return CleanResult(method: .remux)
        case .flipMiddleByte:
            let sink = MemoryOutputSink()
            let result = try inner.clean(input, scan: scan, plan: plan, to: sink)
            var bytes = sink.bytes
            bytes[bytes.count / 2] ^= 0x01
            try output.write(bytes)
            return result
        case .claimTransform:
            var result = try inner.clean(input, scan: scan, plan: plan, to: output)
            XCTAssertEqual(result.method, .remux, "the fixture must be remuxed for this fault to mean anything")
            result.method = .losslessTransform
            return result
        }
    }

    func verifyContent(original: any ByteSource, _ before: Inner.Layout, cleaned: any ByteSource, _ after: Inner.Layout,
                       result: CleanResult) throws -> ContentCheck {
        try inner.verifyContent(original: original, before, cleaned: cleaned, after, result: result)
    }
}
