// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import MetascrubCore
import XCTest

/// What `scan` says a clean would remove is what `clean` removes: for every fixture the manifest expects to clean,
/// the per-category counts of the two reports are the same (a HEIF gain map's colour profile went with its image
/// under clean while scan counted it kept).
final class ScanCleanAgreementTests: XCTestCase {
    func testScanPredictsWhatCleanRemovesOnEveryFixture() throws {
        let manifest = try String(contentsOfFile: Fixture.path("MANIFEST.tsv"), encoding: .utf8)
        let dir = TempDir()
        var compared = 0
        for line in manifest.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count >= 5, fields[4] == "clean-ok" else { continue }
            let input = Fixture.path(fields[0])
            let scan = Run.scan(input)
            let output = dir.file("out-\(compared).\((fields[0] as NSString).pathExtension)")
            let clean = Run.clean(input, to: output)
            guard scan.status != .error, clean.status == .cleaned || clean.status == .clean else { continue }
            XCTAssertEqual(Summary([scan]).removedByCategory, Summary([clean]).removedByCategory, fields[0])
            try? FileManager.default.removeItem(atPath: output)
            compared += 1
        }
        XCTAssertGreaterThan(compared, 150, "the manifest's clean-ok fixtures were compared")
    }
}
