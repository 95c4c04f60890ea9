// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubCore
import XCTest

/// Clean is a fixed point (issue 14), over every fixture of every format under every shipped policy:
/// scan after clean finds nothing to do; cleaning the output again reports `clean`, writes nothing (same bytes,
/// same inode and mtime in place); the input is never touched.
final class FixedPointTests: XCTestCase {
    static let skippedFolders: Set<String> = ["golden", "fuzz"]

    static func fixtures() -> [String] {
        let root = EngineFixture.root.appendingPathComponent("Fixtures").path
        let all = FileManager.default.enumerator(atPath: root)?.allObjects as? [String] ?? []
        return all.filter { path in
            var isDir: ObjCBool = false
            FileManager.default.fileExists(atPath: root + "/" + path, isDirectory: &isDir)
            let top = path.split(separator: "/").first.map(String.init) ?? ""
            return !isDir.boolValue && !skippedFolders.contains(top) && !path.hasSuffix(".tsv") && !path.hasSuffix(".md")
        }.sorted()
    }

    func testEveryFixtureUnderEveryShippedPolicyIsAFixedPoint() throws {
        let fixtures = Self.fixtures()
        XCTAssertGreaterThan(fixtures.count, 100, "the fixture tree is missing")
        let dir = EngineFixture.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var checked = 0, violations: [String] = []
        for name in PolicyCatalog.names.sorted() {
            let processor = FileProcessor(options: ProcessingOptions(policy: try PolicyCatalog.builtin(name)))
            for fixture in fixtures {
                let input = EngineFixture.path(fixture)
                let before = try Data(contentsOf: URL(fileURLWithPath: input))
                let ext = (fixture as NSString).pathExtension
                let first = dir + "/first." + ext, second = dir + "/second." + ext
                try? FileManager.default.removeItem(atPath: first)
                try? FileManager.default.removeItem(atPath: second)
                let cleaned = processor.clean(InputFile(path: input, relative: "f." + ext), output: .file(first))
                XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: input)), before, "\(name): \(fixture) was modified")
                // Refused files (policy `fail`, unsupported variants) have nothing to converge.
                guard cleaned.status == .cleaned || cleaned.status == .clean,
                      FileManager.default.fileExists(atPath: first) else { continue }
                checked += 1
                let rescan = processor.scan(InputFile(path: first, relative: "first." + ext))
                if rescan.status != .clean {
                    violations.append("\(name) \(fixture): scan after clean is \(rescan.status.rawValue): "
                        + rescan.actionable.map { "\($0.disposition.rawValue) \($0.item.key)" }.joined(separator: ", "))
                }
                try FileManager.default.copyItem(atPath: first, toPath: second)
                let stamp = try attributes(second)
                let again = processor.clean(InputFile(path: second, relative: "second." + ext), output: .inPlace)
                if again.status != .clean {
                    violations.append("\(name) \(fixture): second clean is \(again.status.rawValue) \(again.error?.message ?? "")")
                }
                if try Data(contentsOf: URL(fileURLWithPath: second)) != Data(contentsOf: URL(fileURLWithPath: first)) {
                    violations.append("\(name) \(fixture): second clean changed bytes")
                }
                if try attributes(second) != stamp {
                    violations.append("\(name) \(fixture): second clean rewrote the file (inode or mtime changed)")
                }
            }
        }
        XCTAssertGreaterThan(checked, 300)
        XCTAssertEqual(violations, [], "\(violations.count) violations in \(checked) cleans")
    }

    /// Inode and modification time: a file rewritten in place (even with the same bytes) changes one of them.
    private func attributes(_ path: String) throws -> [String] {
        let a = try FileManager.default.attributesOfItem(atPath: path)
        return ["\(a[.systemFileNumber] ?? "")", "\((a[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0)"]
    }
}
