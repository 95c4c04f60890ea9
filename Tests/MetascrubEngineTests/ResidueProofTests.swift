// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
@testable import Metascrub
import MetascrubCore
import MetascrubFormats
import XCTest

/// The residue proof seen failing: a cleaner that forgets one removed item, with a scanner as blind to it in the
/// output as a scanner's blind spot would be, so the re-scan passes. The proof must find the item's bytes, refuse
/// the file (exit 3), leave the original untouched and name the item's key, never its value.
final class ResidueProofTests: XCTestCase {
    func testForgottenTextItemFailsTheResidueProof() async throws {
        let report = try await refused("jpeg/gps-full.jpg", forgetting: "exif:Artist")
        XCTAssertEqual(report.verification?.rescan, .failed)
        XCTAssertEqual(report.verification?.remaining, ["exif:Artist"])
        let message = report.error?.message ?? ""
        XCTAssertTrue(message.contains("residue proof") && message.contains("exif:Artist at byte"), message)
        XCTAssertFalse(message.contains("CANARY-ARTIST"), "the value reached the report without --show-values: \(message)")
    }

    /// Binary GPS rationals (no text in them) are found as bytes.
    func testForgottenGPSRationalsFailTheResidueProof() async throws {
        let report = try await refused("jpeg/gps-full.jpg", forgetting: "exif:GPSLatitude")
        XCTAssertTrue(report.error?.message.contains("exif:GPSLatitude at byte") ?? false, report.error?.message ?? "")
    }

    /// The formats whose content check names the image or sample data it compared byte for byte, which the proof
    /// then skips (issue 25, round 3: PNG IDAT, HEIF coded items, MP4 samples): a forgotten item outside that data,
    /// or inside a sample (an SEI payload, whose bytes the comparison skips), is still found.
    func testForgottenItemsAreFoundBesideProvenImageAndSampleData() async throws {
        for (fixture, key) in [("png/text.png", "png:text:Author"), ("heic/exif-xmp.heic", "exif:Artist"),
                               ("mp4/location.mp4", "mp4:keys/title"), ("mp4/x264-sei.mp4", "h264:sei/encoder-settings")] {
            let report = try await refused(fixture, forgetting: key)
            XCTAssertTrue(report.error?.message.contains("\(key) at byte") ?? false, "\(fixture): \(report.error?.message ?? "")")
        }
    }

    /// A forgotten EXIF thumbnail is found by its scan data, now that its coding tables (every encoder's) are no
    /// canary: on a thumbnail with the standard tables and on one coded by ImageMagick.
    func testForgottenThumbnailIsFoundByItsScanData() async throws {
        for fixture in ["structure/thumb-optimized-6.jpg", "jpeg/gps-full.jpg"] {
            let report = try await refused(fixture, forgetting: "exif:ThumbnailImage")
            XCTAssertTrue(report.error?.message.contains("exif:ThumbnailImage at byte") ?? false, "\(fixture): \(report.error?.message ?? "")")
        }
    }

    /// An embedded JPEG's canaries are its segments' text and a stretch of its scan data: never the standard
    /// Huffman tables, the frame or scan headers or an APPn identifier.
    func testEmbeddedJPEGCanariesSkipCodingTables() throws {
        let photo = try XCTUnwrap(FileManager.default.contents(atPath: EngineFixture.path("structure/thumb-optimized-6.jpg")))
        let bytes = Array(photo)
        // The IFD1 thumbnail: the second SOI in the file.
        let second = try XCTUnwrap((3..<bytes.count - 2).first { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xD8 && bytes[$0 + 2] == 0xFF })
        let parts = try XCTUnwrap(JPEGCanarySource.parts(Array(bytes[second...])))
        let standardAC = Array("%&'()*456789:CDEFGHIJSTUVWXYZcdefghijstuvwxyz".utf8)
        XCTAssertTrue(CanaryExtractor.contains(Array(bytes[second...]), standardAC), "the thumbnail lost its standard tables")
        XCTAssertFalse(CanaryExtractor.contains(parts.text, standardAC), "a Huffman table is a canary")
        XCTAssertFalse(CanaryExtractor.contains(parts.text, Array("JFIF".utf8)), "an APPn identifier is a canary")
        let entropy = try XCTUnwrap(parts.entropy, "no scan data window")
        XCTAssertEqual(entropy.count, JPEGCanarySource.window)
        XCTAssertNil(JPEGCanarySource.parts(Array("not a JPEG at all, only text".utf8)))
    }

    /// Under --show-values the report may say what was found.
    func testShowValuesNamesTheValue() async throws {
        let report = try await refused("jpeg/gps-full.jpg", forgetting: "exif:Artist", showValues: true)
        XCTAssertTrue(report.error?.message.contains("CANARY-ARTIST-Alice") ?? false, report.error?.message ?? "")
    }

    /// The stdin/stdout path runs the same proof: nothing comes out.
    func testStreamCleanRunsTheSameProof() throws {
        var options = ProcessingOptions(policy: try PolicyCatalog.builtin("strict"))
        options.formats = try Self.forgetful("exif:Artist", for: EngineFixture.path("jpeg/gps-full.jpg"))
        let bytes = try XCTUnwrap(FileManager.default.contents(atPath: EngineFixture.path("jpeg/gps-full.jpg")))
        let (report, output) = FileProcessor(options: options).cleanInMemory(MemoryByteSource(Array(bytes)), path: "-")
        XCTAssertNil(output, "unverified bytes were handed out")
        XCTAssertEqual(report.error?.code, "verification-failed")
        XCTAssertTrue(report.error?.message.contains("exif:Artist") ?? false, report.error?.message ?? "")
    }

    /// A faithful clean of every JPEG fixture passes the proof (no false alarm from thumbnails' Huffman tables,
    /// standard strings or kept items), and a clean without values in the report still has none.
    func testFaithfulCleansPass() async throws {
        let dir = EngineFixture.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for policy in ["strict", "share", "location"] {
            let options = ProcessingOptions(policy: try PolicyCatalog.builtin(policy))
            let report = await Engine(options: options, jobs: 1).clean([EngineFixture.path("jpeg")], output: .directory(dir + "/" + policy))
            for file in report.files where file.status == .error {
                XCTAssertFalse(file.error?.message.contains("residue") ?? false, "\(policy) \(file.path): \(file.error?.message ?? "")")
            }
            XCTAssertFalse(report.files.contains { $0.findings.contains { $0.item.value != nil } }, "values in a report without --show-values")
        }
    }

    // MARK: unwalked parts and kept-with-a-reason blocks

    /// A PSD whose layer section cannot be walked (a layer count past its records): refused under the default
    /// `unwalked: fail`, cleaned (the section copied unlisted, with the warning) under `unwalked: keep`.
    func testUnwalkedLayersFailUnlessThePolicyKeepsThem() async throws {
        let dir = EngineFixture.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var bytes = try XCTUnwrap(FileManager.default.contents(atPath: EngineFixture.path("psd/layers.psd")))
        // Header (26), colour mode data and image resources (each a 4-byte length), then the layer and mask
        // section: its length, the layer info's length, the layer count.
        func u32(_ at: Int) -> Int { bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
        var at = 26
        at += 4 + u32(at)
        at += 4 + u32(at)
        bytes[at + 8] = 0x7D
        bytes[at + 9] = 0x00
        let input = dir + "/unwalked.psd"
        try bytes.write(to: URL(fileURLWithPath: input))

        var strict = try PolicyCatalog.builtin("strict")
        let refused = await Engine(options: ProcessingOptions(policy: strict), jobs: 1).clean([input], output: .inPlace)
        XCTAssertEqual(ExitStatus.forClean(refused, exitCodeOnChange: false), .failure)
        XCTAssertEqual(refused.files.first?.error?.code, "verification-failed")
        XCTAssertTrue(refused.files.first?.error?.message.contains("layers-unwalked") ?? false, refused.files.first?.error?.message ?? "")
        XCTAssertEqual(FileManager.default.contents(atPath: input), bytes, "the original changed")

        strict.unwalked = .keep
        let kept = await Engine(options: ProcessingOptions(policy: strict), jobs: 1).clean([input], output: .file(dir + "/out.psd"))
        XCTAssertEqual(kept.files.first?.status, .cleaned, kept.files.first?.error?.message ?? "")
        XCTAssertTrue(kept.files.first?.notes.contains { $0.code == "layers-unwalked" } ?? false, "the warning stays in the report")
    }

    /// A removed value found inside a block a handler keeps with a reason (an embedded file) is residue; inside
    /// an item the policy keeps, or a single value kept with a reason, it is that item's own value.
    func testKeptWithAReasonBlocksAreSearched() throws {
        let secret = Array("CANARY-SECRET-1".utf8)
        var original = [UInt8](repeating: 0, count: 200)
        original.replaceSubrange(10..<10 + secret.count, with: secret)
        original.replaceSubrange(100..<100 + secret.count, with: secret)
        let removed = MetadataItem(key: "exif:Artist", category: .identity, location: "a", offset: 10, length: Int64(secret.count))
        func proof(_ kept: Finding) throws -> [ResidueProof.Residue] {
            let findings = [Finding(item: removed, disposition: .remove, rule: "r"), kept]
            // The output keeps the second block where it was and drops the first.
            var cleaned = original
            cleaned.replaceSubrange(10..<10 + secret.count, with: [UInt8](repeating: 0, count: secret.count))
            let keptRange = Int64(90)..<Int64(140)
            return try ResidueProof(roles: ItemRoles(items: findings.map(\.item), findings: findings))
                .residues(original: MemoryByteSource(original), cleaned: MemoryByteSource(cleaned),
                          keptInOutput: ItemRoles(items: [kept.item], findings: [kept]).exempt(0) ? [keptRange] : [])
        }
        let block = MetadataItem(key: "psd:linkedFile", category: .embedded, location: "b", offset: 90, length: 50)
        let withReason = Finding(item: block, disposition: .keep, rule: "r", reason: "a smart object's file")
        XCTAssertEqual(try proof(withReason).map(\.key), ["exif:Artist"], "a kept-with-a-reason block is searched")
        XCTAssertEqual(try proof(Finding(item: block, disposition: .keep, rule: "r")), [], "a kept item's own value")
        var model = block
        model.key = "exif:Model"
        model.category = .device
        XCTAssertEqual(try proof(Finding(item: model, disposition: .keep, rule: "r", reason: "raws need it")), [],
                       "a single value kept with a reason is the report's declared exception")
    }

    // MARK: the parts

    func testPatternSearchFindsMatchesAcrossWindows() throws {
        var bytes = [UInt8](repeating: 0x41, count: PatternSearch.chunk * 2 + 100)
        let pattern = Array("CANARY-42".utf8)
        let at = [0, PatternSearch.chunk - 4, PatternSearch.chunk * 2 + 100 - pattern.count]
        for offset in at { bytes.replaceSubrange(offset..<offset + pattern.count, with: pattern) }
        let search = PatternSearch([pattern, Array("ZZZZZZZZ".utf8)])
        let hits = try search.hits(in: MemoryByteSource(bytes))
        XCTAssertEqual(hits.map(\.offset), at.map(Int64.init))
        XCTAssertEqual(search.hits(in: bytes).map(\.offset), at.map(Int64.init))
    }

    /// Bytes the content check proved copies are not searched, but a match reaching into them from outside is.
    func testPatternSearchSkipsProvenCopiesButNotTheirEdges() throws {
        var bytes = [UInt8](repeating: 0x41, count: 1000)
        let pattern = Array("CANARY-42".utf8)
        for offset in [100, 496, 700] { bytes.replaceSubrange(offset..<offset + pattern.count, with: pattern) }
        // 100 lies wholly inside the skipped range, 496 starts inside it and ends after it, 700 is after it.
        let hits = try PatternSearch([pattern]).hits(in: MemoryByteSource(bytes), skipping: [50..<500])
        XCTAssertEqual(hits.map(\.offset), [496, 700])
    }

    func testCanaryForms() {
        XCTAssertEqual(CanaryExtractor.decimalDegrees("48/1 51/1 756/25"), ["48.8584"])
        XCTAssertEqual(CanaryExtractor.decimalDegrees("2/1 17/1 201/5"), ["2.2945", "2.2944"].sorted())
        XCTAssertEqual(CanaryExtractor.textRuns(Array("\u{0}\u{1}lang=\"x-default\" CANARY-XMP\u{0}abc".utf8)).map { String(decoding: $0, as: UTF8.self) },
                       ["x-default", "CANARY-XMP"])
        XCTAssertFalse(CanaryExtractor.accepts(Array("2021:07:14 10:11:12".utf8), category: .time, serial: false), "digits and punctuation")
        XCTAssertTrue(CanaryExtractor.accepts(Array("+48.8583+002.2945/".utf8), category: .location, serial: false), "a coordinate pair")
        XCTAssertTrue(CanaryExtractor.accepts(Array("20210714".utf8), category: .device, serial: true), "a serial number")
        XCTAssertFalse(CanaryExtractor.accepts(Array("x-default".utf8), category: .content, serial: false), "every XMP packet says it")
    }

    // MARK: helpers

    /// Cleans a copy of `fixture` in place with a cleaner that forgets `key`; checks the refusal and the original.
    func refused(_ fixture: String, forgetting key: String, showValues: Bool = false,
                 file: StaticString = #filePath, line: UInt = #line) async throws -> FileReport {
        let dir = EngineFixture.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let input = dir + "/" + (fixture as NSString).lastPathComponent
        try FileManager.default.copyItem(atPath: EngineFixture.path(fixture), toPath: input)
        let original = FileManager.default.contents(atPath: input)
        var options = ProcessingOptions(policy: try PolicyCatalog.builtin("strict"), showValues: showValues)
        options.formats = try Self.forgetful(key, for: input)
        let report = await Engine(options: options, jobs: 1).clean([input], output: .inPlace)
        XCTAssertEqual(ExitStatus.forClean(report, exitCodeOnChange: false), .failure, "exit status", file: file, line: line)
        let fileReport = try XCTUnwrap(report.files.first, file: file, line: line)
        XCTAssertEqual(fileReport.status, .error, file: file, line: line)
        XCTAssertEqual(fileReport.error?.code, "verification-failed", fileReport.error?.message ?? "", file: file, line: line)
        XCTAssertNil(fileReport.output, file: file, line: line)
        XCTAssertEqual(FileManager.default.contents(atPath: input), original, "the original changed", file: file, line: line)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir), [(input as NSString).lastPathComponent],
                       "something was left beside the original", file: file, line: line)
        return fileReport
    }

    /// The format table with the fixture's handler replaced by one that forgets `key`.
    static func forgetful(_ key: String, for path: String) throws -> [FormatEntry] {
        let head = Array(try XCTUnwrap(FileManager.default.contents(atPath: path)).prefix(Magic.headLength))
        let real = try XCTUnwrap(FormatRegistry.detect(head))
        let handler: any FormatHandler
        switch real.format.id {
        case "jpeg": handler = ForgetfulCleaner(JPEGFormat(), key: key)
        case "png": handler = ForgetfulCleaner(PNGFormat(), key: key)
        case "heif": handler = ForgetfulCleaner(HEIFFormat(), key: key)
        case "mp4": handler = ForgetfulCleaner(MP4Format(), key: key)
        default: throw XCTSkip("no forgetful cleaner for \(real.format.id)")
        }
        return [FormatEntry(real.format, detect: real.detect, handler: handler, capabilities: real.capabilities)]
    }
}

/// Forgets to remove one item, and its scanner does not see that item in what it wrote (the blind spot the
/// residue proof exists for): the first scan (the original's) lists it, every later scan (the output's) does not.
struct ForgetfulCleaner<Inner: FormatHandler>: FormatHandler {
    final class Scans: @unchecked Sendable {
        var count = 0
    }

    let inner: Inner
    let key: String
    let scans = Scans()

    init(_ inner: Inner, key: String) {
        self.inner = inner
        self.key = key
    }

    func scan(_ input: any ByteSource, options: ScanOptions) throws -> ScanResult<Inner.Layout> {
        scans.count += 1
        let result = try inner.scan(input, options: options)
        guard scans.count > 1 else { return result }
        // Hidden by dropping it (the fixtures' EXIF items have no parents, and the items the layout points at by
        // index, orientation first, come before the ones forgotten here).
        var hidden = result
        hidden.items = result.items.filter { $0.key != key }
        return hidden
    }

    func settle(_ findings: [Finding], input: any ByteSource, scan: ScanResult<Inner.Layout>, policy: Policy) throws -> [Finding] {
        try inner.settle(findings, input: input, scan: scan, policy: policy)
    }

    func clean(_ input: any ByteSource, scan: ScanResult<Inner.Layout>, plan: CleanPlan, to output: any OutputSink) throws -> CleanResult {
        // Without its ledger, as a handler that writes no plan: the ledger check would name the forgotten item
        // first (`LedgerCoverageTests`), and this cleaner exists to show the residue proof on its own.
        var result = try inner.clean(input, scan: scan, plan: plan.forgetting(key), to: output)
        result.ledger = nil
        return result
    }

    func verifyContent(original: any ByteSource, _ before: Inner.Layout, cleaned: any ByteSource, _ after: Inner.Layout,
                       result: CleanResult) throws -> ContentCheck {
        try inner.verifyContent(original: original, before, cleaned: cleaned, after, result: result)
    }
}
