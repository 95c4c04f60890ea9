// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import XCTest

/// JPEG 2000 and SVG in a publish folder: cleaned like photos, and the published copy scans clean (exit 0).
final class PublishedDocumentsTests: XCTestCase {
    var tmp: String!

    override func setUpWithError() throws {
        try Harness.requireBinary()
        tmp = Harness.makeTemp("documents")
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: tmp) }

    func testJPEG2000AndSVGArePublishedCleanAndScanClean() {
        let files = ["jp2/geo-gps.jp2", "jp2/comment.j2k", "svg/inkscape.svg", "unchecked/gps.jp2", "unchecked/author.svg"]
        for (i, name) in files.enumerated() {
            Harness.copy(name, to: "\(tmp!)/site/\(i)-\((name as NSString).lastPathComponent)")
        }
        XCTAssertEqual(Harness.metascrub(["scan", "\(tmp!)/site", "-q"]).status, 1, "the originals carry metadata")
        let clean = Harness.metascrub(["clean", "\(tmp!)/site", "--output-dir", "\(tmp!)/dist", "-q"])
        XCTAssertEqual(clean.status, 0, clean.stderr)
        for (i, name) in files.enumerated() {
            XCTAssertTrue(Harness.exists("\(tmp!)/dist/\(i)-\((name as NSString).lastPathComponent)"), name)
        }
        let rescan = Harness.metascrub(["scan", "\(tmp!)/dist"])
        XCTAssertEqual(rescan.status, 0, rescan.out)
    }
}
