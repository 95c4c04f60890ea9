// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubCore
import XCTest

/// What `scan` lists for every fixture, compared with a golden file. Re-record after an intended change with
/// `METASCRUB_RECORD=1 swift test --filter GoldenTests` and review the diff.
/// Goldens live in Fixtures/golden/ (mirroring the fixture tree) because scripts/make-fixtures rebuilds the
/// format folders from scratch.
final class GoldenTests: XCTestCase {
    static let formats = ["jpeg"]

    func testScanListingsMatchGoldens() throws {
        let record = ProcessInfo.processInfo.environment["METASCRUB_RECORD"] != nil
        var compared = 0
        for folder in Self.formats {
            for sub in [folder, folder + "/bad"] {
                for input in Fixture.all(in: sub, extensions: ["jpg", "jpeg", "png", "webp", "gif", "tif", "tiff", "heic", "avif", "jxl"]) {
                    let relative = String(input.dropFirst(Fixture.root.path.count + 1))
                    let golden = Fixture.path("golden/\(relative).scan.txt")
                    let actual = Self.listing(Run.scan(input))
                    if record {
                        try FileManager.default.createDirectory(atPath: (golden as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                        try actual.write(toFile: golden, atomically: true, encoding: .utf8)
                        continue
                    }
                    guard let expected = try? String(contentsOfFile: golden, encoding: .utf8) else {
                        XCTFail("no golden for \(relative); record with METASCRUB_RECORD=1")
                        continue
                    }
                    XCTAssertEqual(actual, expected, "\(relative) lists differently from its golden")
                    compared += 1
                }
            }
        }
        if !record { XCTAssertGreaterThan(compared, 30) }
    }

    /// One line per item: what a reviewer needs to see a change, and no values.
    static func listing(_ report: FileReport) -> String {
        var lines = ["status: \(report.status.rawValue)" + (report.error.map { " \($0.code) at \($0.offset.map(String.init) ?? "-")" } ?? "")]
        for f in report.findings {
            let parent = f.item.parent.map { " in #\($0)" } ?? ""
            lines.append("\(f.disposition.rawValue) \(f.item.category.rawValue) \(f.item.key) @ \(f.item.location)\(parent)")
        }
        for note in report.notes { lines.append("note \(note.severity.rawValue) \(note.code)") }
        return lines.joined(separator: "\n") + "\n"
    }
}
