// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubCore
import XCTest

/// The README's first command ends with `scripts/demo`, which cleans every fixture outside `bad/`, `fuzz/`,
/// `golden/` and `workflow/` under the default policy and exits non-zero if any is refused that
/// `Fixtures/refused-on-purpose.tsv` does not list (issue 26). This keeps that list exact, so a new fixture that
/// is refused by design is listed in the same change, and a listed one that starts cleaning is noticed.
final class DemoFixturesTests: XCTestCase {
    static let skippedTopFolders: Set<String> = ["fuzz", "golden", "workflow"]

    /// The files the demo walks, relative to Fixtures/.
    static func walked() -> [String] {
        let root = EngineFixture.root.appendingPathComponent("Fixtures").path
        let all = FileManager.default.enumerator(atPath: root)?.allObjects as? [String] ?? []
        return all.filter { path in
            var isDir: ObjCBool = false
            FileManager.default.fileExists(atPath: root + "/" + path, isDirectory: &isDir)
            let parts = path.split(separator: "/").map(String.init)
            return !isDir.boolValue && !skippedTopFolders.contains(parts.first ?? "") && !parts.contains("bad")
        }.sorted()
    }

    /// `path<TAB>reason` rows; `#` lines are comments.
    static func listedRefusals() throws -> [String: String] {
        let text = try String(contentsOfFile: EngineFixture.path("refused-on-purpose.tsv"), encoding: .utf8)
        var rows: [String: String] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") && !line.isEmpty {
            let fields = line.split(separator: "\t", maxSplits: 1).map(String.init)
            rows[fields[0]] = fields.count > 1 ? fields[1] : ""
        }
        return rows
    }

    func testEveryWalkedFixtureCleansOrIsListedAsRefusedOnPurpose() throws {
        let listed = try Self.listedRefusals()
        let walked = Self.walked()
        XCTAssertGreaterThan(walked.count, 100, "the fixture tree is missing")
        for path in listed.keys {
            XCTAssertTrue(walked.contains(path), "\(path) is listed as refused on purpose but the demo does not walk it")
            XCTAssertFalse(listed[path]!.isEmpty, "\(path) is listed without a reason")
        }
        let dir = EngineFixture.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let processor = FileProcessor(options: ProcessingOptions(policy: try PolicyCatalog.builtin(BuiltinPolicies.defaultName)))
        var unexpected: [String] = []
        for path in walked {
            // Mirrored into a folder, as the demo does: files that are not media are copied and reported skipped.
            let output = dir + "/" + path
            let report = processor.clean(InputFile(path: EngineFixture.path(path), relative: path), output: .directory(dir))
            let refused = report.status == .error
            if refused && listed[path] == nil {
                unexpected.append("\(path) is refused (\(report.error?.message ?? "")) but not listed in Fixtures/refused-on-purpose.tsv")
            } else if !refused && listed[path] != nil {
                unexpected.append("\(path) is listed as refused on purpose but now ends \(report.status.rawValue)")
            }
            if refused {
                XCTAssertFalse(FileManager.default.fileExists(atPath: output), "\(path): a refused file wrote an output")
            }
        }
        XCTAssertEqual(unexpected, [])
    }
}
