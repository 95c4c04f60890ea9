// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import XCTest
@testable import MetascrubCore

final class ReportTests: XCTestCase {
    private func sampleReport(value: String? = nil) -> Report {
        var cleaned = FileReport(path: "photos/a.jpg", status: .cleaned)
        cleaned.format = "jpeg"
        cleaned.method = .remux
        cleaned.output = "out/a.jpg"
        cleaned.bytesBefore = 1000
        cleaned.bytesAfter = 800
        cleaned.sha256Before = String(repeating: "a", count: 64)
        cleaned.sha256After = String(repeating: "b", count: 64)
        cleaned.findings = [
            Finding(item: MetadataItem(key: "exif:GPSLatitude", category: .location, location: "APP1#1/EXIF/GPS/0x0002", offset: 40, length: 24, value: value),
                    disposition: .remove, rule: "category location", outcome: .removed),
            Finding(item: MetadataItem(key: "icc:profile", category: .rendering, location: "APP2/ICC_PROFILE"),
                    disposition: .keep, rule: "category rendering", outcome: .kept),
        ]
        cleaned.verification = Verification(rescan: .passed, content: "image stream byte-identical", contentResult: .passed)
        var failed = FileReport(path: "photos/b.jpg", status: .error)
        failed.error = ErrorInfo(.truncated(format: "JPEG", path: "SOS", offset: 1234, needed: 10))
        var skipped = FileReport(path: "notes.txt", status: .skipped)
        skipped.reason = "not-media"
        return Report(tool: .init(version: "0.0.0-test"), command: .clean, policy: .init(name: "strict", digest: "sha256:x"),
                      files: [cleaned, failed, skipped])
    }

    func testJSONRoundTripsAndUsesSnakeCase() throws {
        let report = sampleReport()
        let text = try JSONReportRenderer().render(report)
        XCTAssertTrue(text.contains("\"schema_version\" : 1"))
        XCTAssertTrue(text.contains("\"sha256_before\""))
        XCTAssertTrue(text.contains("\"action\" : \"remove\""))
        let decoded = try JSONDecoder().decode(Report.self, from: Data(text.utf8))
        XCTAssertEqual(decoded, report)
    }

    /// A report of many files is encoded a file at a time on every core and spliced (issue 25, round 3): its bytes are
    /// the single encoder's, whatever the values hold (newlines, quotes, slashes, non-ASCII, empty lists).
    func testManyFilesRenderTheSameBytesAsOneEncoder() throws {
        var files: [FileReport] = []
        for index in 0..<(ParallelJSONReport.minimumFiles * 3 + 1) {
            var report = sampleReport(value: "line one\nline \"two\" / été \(index)").files[index % 3]
            report.path = "dir/\(index)\n.jpg"
            if index % 5 == 0 { report.findings = [] }
            if index % 7 == 0 { report.notes = [Note(.warning, code: "odd", "a note\nover two lines")] }
            files.append(report)
        }
        let report = Report(tool: .init(version: "0.0.0-test"), command: .scan, policy: .init(name: "strict", digest: "sha256:x"), files: files)
        let single = String(decoding: try JSONReportRenderer.encoder().encode(report), as: UTF8.self) + "\n"
        XCTAssertNotNil(try ParallelJSONReport.render(report, encoder: JSONReportRenderer.encoder), "the spliced path was not taken")
        XCTAssertEqual(try JSONReportRenderer().render(report), single)
        let few = Report(tool: report.tool, command: .scan, policy: report.policy, files: Array(files.prefix(3)))
        XCTAssertEqual(try JSONReportRenderer().render(few), String(decoding: try JSONReportRenderer.encoder().encode(few), as: UTF8.self) + "\n")
    }

    func testSummaryCountsStatusesAndRemovedCategories() {
        let summary = sampleReport().summary
        XCTAssertEqual(summary.files, 3)
        XCTAssertEqual(summary.byStatus, ["cleaned": 1, "error": 1, "skipped": 1])
        XCTAssertEqual(summary.removedByCategory, ["location": 1])
        XCTAssertEqual(summary.failed, 1)
    }

    /// A kept cover whose GPS was removed has removed items; a removed cover's items went with it, counted once.
    func testRemovedItemsInsideAKeptCoverCountButThoseOfARemovedCoverDoNot() throws {
        func cover(_ outcome: Outcome, _ disposition: Disposition) -> [Finding] {
            [Finding(item: MetadataItem(key: "flac:picture", category: .embedded, location: "PICTURE#1"),
                     disposition: disposition, rule: "category embedded", outcome: outcome),
             Finding(item: MetadataItem(key: "exif:GPSLatitude", category: .location, location: "PICTURE#1 > GPS", parent: 0),
                     disposition: .remove, rule: "category location", outcome: .removed),
             Finding(item: MetadataItem(key: "exif:Artist", category: .identity, location: "PICTURE#1 > IFD0", parent: 0),
                     disposition: .keep, rule: "category identity", outcome: .kept)]
        }
        var kept = FileReport(path: "kept.flac", status: .cleaned)
        kept.findings = cover(.cleaned, .clean)
        var removed = FileReport(path: "removed.flac", status: .cleaned)
        removed.findings = cover(.removed, .remove)
        XCTAssertEqual(kept.removedFindings.map(\.item.key), ["exif:GPSLatitude"])
        XCTAssertEqual(removed.removedFindings.map(\.item.key), ["flac:picture"])
        let report = Report(tool: .init(version: "0.0.0-test"), command: .clean, policy: .init(name: "location", digest: "sha256:x"),
                            files: [kept, removed])
        XCTAssertEqual(report.summary.removedByCategory, ["location": 1, "embedded": 1])
        let text = try TextReportRenderer().render(report)
        XCTAssertTrue(text.contains("kept.flac: cleaned: 1 item removed (location 1), 1 of them inside embedded files"), text)
        XCTAssertTrue(text.contains("removed.flac: cleaned: 1 item removed (embedded 1)\n"), text)
    }

    func testTextReportNeverShowsValuesUnlessTheyWereCaptured() throws {
        let plain = try TextReportRenderer().render(sampleReport())
        XCTAssertTrue(plain.contains("photos/a.jpg: cleaned [jpeg] by remux -> out/a.jpg: 1 item removed (location 1)"), plain)
        XCTAssertFalse(plain.contains("icc:profile"), "kept items appear only with --verbose")
        let verbose = try TextReportRenderer(verbose: true).render(sampleReport())
        XCTAssertTrue(verbose.contains("exif:GPSLatitude"))
        XCTAssertTrue(verbose.contains("icc:profile"))
        XCTAssertTrue(plain.contains("error: JPEG: truncated at SOS (offset 1234)"))
        XCTAssertTrue(plain.hasSuffix("3 files: 1 cleaned, 1 skipped, 1 error; items removed: location 1\n"))
        let withValue = try TextReportRenderer(verbose: true).render(sampleReport(value: "48/1 51/1 0/1\u{1B}[2J"))
        XCTAssertTrue(withValue.contains("= 48/1 51/1 0/1?[2J"), "control characters are neutralised")
    }

    func testSARIFHasARulePerCategoryAndAResultPerFileAndRule() throws {
        let root = SARIFSourceRoot(root: nil, workingDirectory: "/")
        let text = try SARIFReportRenderer(sourceRoot: root).render(sampleReport())
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        XCTAssertEqual(json["version"] as? String, "2.1.0")
        let run = try XCTUnwrap((json["runs"] as? [[String: Any]])?.first)
        let driver = try XCTUnwrap((run["tool"] as? [String: Any])?["driver"] as? [String: Any])
        let rules = try XCTUnwrap(driver["rules"] as? [[String: Any]])
        XCTAssertEqual(rules.count, Category.allCases.count + 3, "one per category, then metascrub/error, reencode and not-checked")
        let results = try XCTUnwrap(run["results"] as? [[String: Any]])
        XCTAssertEqual(results.map { $0["ruleId"] as? String }, ["metascrub/location", "metascrub/error"])
        let fingerprint = (results[0]["partialFingerprints"] as? [String: String])?["metascrub/v2"]
        XCTAssertEqual(fingerprint?.count, 64)
        XCTAssertNil(driver["informationUri"], "the project has no public address; no placeholder")
        XCTAssertEqual(try SARIFReportRenderer(sourceRoot: root).render(sampleReport()), text, "stable output")
    }

    func testJSONSchemaFileDescribesTheReport() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let data = try Data(contentsOf: root.appendingPathComponent("docs/report.schema.json"))
        let schema = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
        let required = try XCTUnwrap(schema["required"] as? [String])
        let report = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(try JSONReportRenderer().render(sampleReport()).utf8)) as? [String: Any])
        XCTAssertEqual(Set(required), Set(report.keys), "docs/report.schema.json lists the report's top-level fields")
        let properties = try XCTUnwrap(schema["properties"] as? [String: Any])
        XCTAssertEqual(((properties["schema_version"] as? [String: Any])?["const"] as? Int), Report.schemaVersion)
    }
}
