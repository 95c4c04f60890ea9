// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
@testable import Metascrub
import MetascrubCore
import MetascrubFormats
import XCTest

/// The output ledger: every range of a plan-written output carries its reason, and the verifier refuses an output
/// whose ranges do not add up or whose reasons do not hold, naming the output offset.
final class LedgerCoverageTests: XCTestCase {
    /// An original of 100 bytes: item 0 (kept) at 10..<20, item 1 (removed) at 30..<40; the content check compared
    /// 50..<100.
    private func coverage() -> LedgerCoverage {
        let items = [MetadataItem(key: "exif:Make", category: .device, location: "IFD0/Make", offset: 10, length: 10),
                     MetadataItem(key: "exif:Artist", category: .identity, location: "IFD0/Artist", offset: 30, length: 10)]
        let findings = [Finding(item: items[0], disposition: .keep, rule: "keep"),
                        Finding(item: items[1], disposition: .remove, rule: "remove")]
        return LedgerCoverage(items: items, findings: findings, compared: [50..<100])
    }

    private let original = MemoryByteSource([UInt8](repeating: 7, count: 100))

    private func violation(_ entries: [OutputLedger.Entry], output: [UInt8]) -> LedgerViolation? {
        do {
            try coverage().check(OutputLedger(entries: entries), original: original, cleaned: MemoryByteSource(output))
            return nil
        } catch {
            return error as? LedgerViolation
        }
    }

    func testAnOutputMadeOfItsReasonsPasses() {
        let entries: [OutputLedger.Entry] = [
            .init(output: 0..<4, source: nil, reason: .structure),
            .init(output: 4..<14, source: 10..<20, reason: .keptItem(0)),
            .init(output: 14..<16, source: nil, reason: .padding),
            .init(output: 16..<66, source: 50..<100, reason: .codedData),
        ]
        XCTAssertNil(violation(entries, output: [1, 2, 3, 4] + [UInt8](repeating: 7, count: 10) + [0, 0] + [UInt8](repeating: 7, count: 50)))
    }

    func testAKeptItemRangeOutsideEveryKeptItemIsRefusedAtItsOutputOffset() {
        // Labelled as item 0 (kept) but copied from 15..<25, which runs past the item's end.
        let entries: [OutputLedger.Entry] = [.init(output: 0..<4, source: nil, reason: .structure),
                                             .init(output: 4..<14, source: 15..<25, reason: .keptItem(0))]
        XCTAssertEqual(violation(entries, output: [UInt8](repeating: 7, count: 14)),
                       LedgerViolation(offset: 4, kind: .outsideKeptItem(item: 0, source: 15..<25)))
    }

    func testARemovedItemLabelledAsKeptIsRefused() {
        let entries: [OutputLedger.Entry] = [.init(output: 0..<10, source: 30..<40, reason: .keptItem(1))]
        XCTAssertEqual(violation(entries, output: [UInt8](repeating: 7, count: 10)), LedgerViolation(offset: 0, kind: .itemNotKept(item: 1)))
        let unknown: [OutputLedger.Entry] = [.init(output: 0..<10, source: 30..<40, reason: .keptItem(9))]
        XCTAssertEqual(violation(unknown, output: [UInt8](repeating: 7, count: 10)), LedgerViolation(offset: 0, kind: .itemNotKept(item: 9)))
    }

    func testCodedDataTheContentCheckDidNotCompareIsRefused() {
        // 40..<60: the first 10 bytes were not compared.
        let entries: [OutputLedger.Entry] = [.init(output: 0..<20, source: 40..<60, reason: .codedData)]
        XCTAssertEqual(violation(entries, output: [UInt8](repeating: 7, count: 20)),
                       LedgerViolation(offset: 0, kind: .undeclaredCodedData(source: 40..<60)))
        let tail: [OutputLedger.Entry] = [.init(output: 0..<5, source: 95..<100, reason: .codedData),
                                          .init(output: 5..<10, source: 0..<5, reason: .codedData)]
        XCTAssertEqual(violation(tail, output: [UInt8](repeating: 7, count: 10)),
                       LedgerViolation(offset: 5, kind: .undeclaredCodedData(source: 0..<5)))
    }

    func testBytesThePlanDoesNotAccountForAreRefused() {
        let short: [OutputLedger.Entry] = [.init(output: 0..<8, source: nil, reason: .structure)]
        XCTAssertEqual(violation(short, output: [UInt8](repeating: 1, count: 12)),
                       LedgerViolation(offset: 8, kind: .sizeMismatch(ledger: 8, output: 12)))
        let gap: [OutputLedger.Entry] = [.init(output: 0..<4, source: nil, reason: .structure),
                                         .init(output: 6..<8, source: nil, reason: .structure)]
        XCTAssertEqual(violation(gap, output: [UInt8](repeating: 1, count: 8)), LedgerViolation(offset: 4, kind: .notContiguous))
    }

    func testPaddingThatIsNotZeroIsRefused() {
        let entries: [OutputLedger.Entry] = [.init(output: 0..<4, source: nil, reason: .structure),
                                             .init(output: 4..<8, source: nil, reason: .padding)]
        XCTAssertEqual(violation(entries, output: [1, 1, 1, 1, 0, 0, 9, 0]), LedgerViolation(offset: 6, kind: .paddingNotZero))
    }

    /// A real JPEG clean hands back a ledger that covers its output, with the image stream as coded data.
    func testAJPEGCleanAccountsForEveryOutputByte() throws {
        let bytes = try XCTUnwrap(FileManager.default.contents(atPath: EngineFixture.path("jpeg/gps-full.jpg")))
        let source = MemoryByteSource(Array(bytes))
        let scan = try JPEGFormat().scan(source, options: ScanOptions(includeValues: true))
        let policy = try PolicyCatalog.builtin("strict")
        let findings = try JPEGFormat().settle(policy.evaluate(scan.items), input: source, scan: scan, policy: policy)
        let sink = MemoryOutputSink()
        let result = try JPEGFormat().clean(source, scan: scan, plan: CleanPlan(findings: findings, policy: policy), to: sink)
        let ledger = try XCTUnwrap(result.ledger)
        XCTAssertEqual(ledger.size, Int64(sink.bytes.count))
        XCTAssertTrue(ledger.entries.contains { $0.reason == .codedData })
        let cleaned = MemoryByteSource(sink.bytes)
        let after = try JPEGFormat().scan(cleaned, options: ScanOptions())
        let content = try JPEGFormat().verifyContent(original: source, scan.layout, cleaned: cleaned, after.layout, result: result)
        XCTAssertTrue(content.passed)
        XCTAssertNoThrow(try LedgerCoverage(items: scan.items, findings: findings, compared: content.identical.map(\.original))
            .check(ledger, original: source, cleaned: cleaned))
    }

    /// Every plan-written format labels its image or sample data as coded data, and the one verifier accepts the
    /// ledger (the content check compared what it labels coded): one fixture per container.
    func testEachPlanWrittenFormatLabelsItsCodedData() throws {
        let fixtures = ["jpeg/gps-full.jpg", "png/iccp.png", "heic/exif-xmp.heic", "mp4/location.mp4", "audio/blocks.flac",
                        "audio/id3v23.mp3", "audio/vorbis.ogg", "audio/chunks.wav", "gif/comment.gif", "tiff/le.tif",
                        "jxl/exif-xmp.jxl", "psd/layers.psd"]
        let options = ProcessingOptions(policy: try PolicyCatalog.builtin("strict"))
        for fixture in fixtures {
            let bytes = try XCTUnwrap(FileManager.default.contents(atPath: EngineFixture.path(fixture)), fixture)
            let source = MemoryByteSource(Array(bytes))
            let handler = try XCTUnwrap(FormatRegistry.detect(Array(bytes.prefix(Magic.headLength)))?.handler, fixture)
            let decision = try Decide(policy: options.policy)(source, handler: handler)
            let sink = MemoryOutputSink()
            let result = try Produce(policy: options.policy, layout: options.layout)(source, decision, to: sink)
            let ledger = try XCTUnwrap(result.ledger, "\(fixture): no ledger")
            XCTAssertEqual(ledger.size, Int64(sink.bytes.count), fixture)
            XCTAssertTrue(ledger.entries.contains { $0.reason == .codedData && $0.source != nil }, "\(fixture): no coded data")
            XCTAssertNoThrow(try Prove(options: options)(original: source, decision, result, cleaned: MemoryByteSource(sink.bytes)),
                             fixture)
        }
    }

    /// A cleaner that forgets to remove an item its scanner then cannot see in the output (the residue proof's
    /// blind spot) still labels the item's bytes as a kept item: the ledger names it before the residue proof runs.
    func testAForgottenItemIsNamedByTheLedger() async throws {
        let dir = EngineFixture.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let input = dir + "/text.png"
        try FileManager.default.copyItem(atPath: EngineFixture.path("png/text.png"), toPath: input)
        let original = FileManager.default.contents(atPath: input)
        var options = ProcessingOptions(policy: try PolicyCatalog.builtin("strict"))
        let real = try XCTUnwrap(FormatRegistry.detect(Array(try XCTUnwrap(original).prefix(Magic.headLength))))
        options.formats = [FormatEntry(real.format, detect: real.detect, handler: LedgerKeepingForgetter(inner: PNGFormat(), key: "png:text:Author"),
                                       capabilities: real.capabilities)]
        let report = await Engine(options: options, jobs: 1).clean([input], output: .inPlace)
        let file = try XCTUnwrap(report.files.first)
        let message = file.error?.message ?? ""
        XCTAssertEqual(file.error?.code, "verification-failed", message)
        XCTAssertTrue(message.contains("(ledger): output byte ") && message.contains("which the policy does not keep (png:text:Author)"), message)
        XCTAssertEqual(FileManager.default.contents(atPath: input), original, "the original changed")
    }

    /// A handler whose plan says the entropy-coded data is a kept item: the clean is refused (exit 3), the report
    /// names the output offset, and the original is left as it was.
    func testAHandlerThatMislabelsACopiedRangeIsRefused() async throws {
        let dir = EngineFixture.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let input = dir + "/gps-full.jpg"
        try FileManager.default.copyItem(atPath: EngineFixture.path("jpeg/gps-full.jpg"), toPath: input)
        let original = FileManager.default.contents(atPath: input)
        var options = ProcessingOptions(policy: try PolicyCatalog.builtin("location"))
        let real = try XCTUnwrap(FormatRegistry.detect(Array(try XCTUnwrap(original).prefix(Magic.headLength))))
        options.formats = [FormatEntry(real.format, detect: real.detect, handler: LedgerMislabeller(inner: JPEGFormat()),
                                       capabilities: real.capabilities)]
        let report = await Engine(options: options, jobs: 1).clean([input], output: .inPlace)
        let file = try XCTUnwrap(report.files.first)
        XCTAssertEqual(file.status, .error)
        let message = file.error?.message ?? ""
        XCTAssertEqual(file.error?.code, "verification-failed", message)
        XCTAssertTrue(message.contains("(ledger): output byte ") && message.contains("outside kept item"), message)
        XCTAssertEqual(FileManager.default.contents(atPath: input), original, "the original changed")
    }
}

/// Keeps `key` although the policy removes it, and does not list it when scanning its own output; unlike the
/// residue proof's `ForgetfulCleaner`, it hands back its ledger.
struct LedgerKeepingForgetter<Inner: FormatHandler>: FormatHandler {
    let inner: Inner
    let key: String
    let scans = ForgetfulCleaner<Inner>.Scans()

    func scan(_ input: any ByteSource, options: ScanOptions) throws -> ScanResult<Inner.Layout> {
        scans.count += 1
        var result = try inner.scan(input, options: options)
        if scans.count > 1 { result.items = result.items.filter { $0.key != key } }
        return result
    }

    func settle(_ findings: [Finding], input: any ByteSource, scan: ScanResult<Inner.Layout>, policy: Policy) throws -> [Finding] {
        try inner.settle(findings, input: input, scan: scan, policy: policy)
    }

    func clean(_ input: any ByteSource, scan: ScanResult<Inner.Layout>, plan: CleanPlan, to output: any OutputSink) throws -> CleanResult {
        return try inner.clean(input, scan: scan, plan: plan.forgetting(key), to: output)
    }

    func verifyContent(original: any ByteSource, _ before: Inner.Layout, cleaned: any ByteSource, _ after: Inner.Layout,
                       result: CleanResult) throws -> ContentCheck {
        try inner.verifyContent(original: original, before, cleaned: cleaned, after, result: result)
    }
}

/// Cleans like the JPEG handler, then labels the image stream as the first kept item (a copy without a true reason).
struct LedgerMislabeller: FormatHandler {
    let inner: JPEGFormat

    func scan(_ input: any ByteSource, options: ScanOptions) throws -> ScanResult<JPEGLayout> {
        try inner.scan(input, options: options)
    }

    func settle(_ findings: [Finding], input: any ByteSource, scan: ScanResult<JPEGLayout>, policy: Policy) throws -> [Finding] {
        try inner.settle(findings, input: input, scan: scan, policy: policy)
    }

    func clean(_ input: any ByteSource, scan: ScanResult<JPEGLayout>, plan: CleanPlan, to output: any OutputSink) throws -> CleanResult {
        var result = try inner.clean(input, scan: scan, plan: plan, to: output)
        guard let ledger = result.ledger, let kept = plan.findings.indices.first(where: plan.keeps) else { return result }
        result.ledger = OutputLedger(entries: ledger.entries.map { entry in
            var entry = entry
            if entry.reason == .codedData { entry.reason = .keptItem(kept) }
            return entry
        })
        return result
    }

    func verifyContent(original: any ByteSource, _ before: JPEGLayout, cleaned: any ByteSource, _ after: JPEGLayout,
                       result: CleanResult) throws -> ContentCheck {
        try inner.verifyContent(original: original, before, cleaned: cleaned, after, result: result)
    }

    func reencodableBake(input: any ByteSource, scan: ScanResult<JPEGLayout>, plan: CleanPlan) -> ReencodableBake? { nil }
}
