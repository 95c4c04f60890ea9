// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import XCTest

/// `policy check` catches the typos that make a rule match nothing (under `default: keep` the GPS would stay),
/// says where with line and column, and turns a duplicate key into one line.
final class PolicyCheckTests: XCTestCase {
    var tmp: String!

    override func setUpWithError() throws {
        try Harness.requireBinary()
        tmp = Harness.makeTemp("policy-check")
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: tmp) }

    private func check(_ yaml: String) throws -> Harness.Result {
        try yaml.write(toFile: tmp + "/p.yaml", atomically: true, encoding: .utf8)
        return Harness.metascrub(["policy", "check", "p.yaml"], cwd: tmp)
    }

    func testUnknownNamespacesAndTagNamesAreWarnedWithWhereAndASuggestion() throws {
        let r = try check("schema: 1\nname: p\ndefault: keep\nkeys:\n  exf:GPS*: remove\n  exif:GPSLatitud: remove\n  exif:GPS*: remove\n  xmp:dc:creator: remove\n")
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("p.yaml:5:3: keys.exf:GPS*: no item is ever reported in namespace 'exf' (did you mean 'exif'?)"), r.stderr)
        XCTAssertTrue(r.stderr.contains("p.yaml:6:3: keys.exif:GPSLatitud: no EXIF tag is named 'GPSLatitud' (did you mean 'GPSLatitude'?)"), r.stderr)
        XCTAssertEqual(r.stderr.split(separator: "\n").count, 2, "the correct rules are not warned about: \(r.stderr)")
        for name in ["strict", "share", "location"] {
            let shipped = Harness.metascrub(["policy", "check", Harness.repo.appendingPathComponent("policies/\(name).yaml").path])
            XCTAssertEqual(shipped.status, 0)
            XCTAssertEqual(shipped.stderr, "", "\(name) has no suspicious rule")
        }
    }

    func testADuplicateKeyIsOneClearLine() throws {
        let r = try check("schema: 1\nname: p\ncategories:\n  location: remove\n  location: keep\n")
        XCTAssertEqual(r.status, 2)
        XCTAssertEqual(r.stderr.split(separator: "\n").count, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("p.yaml:4:") && r.stderr.contains("'location' given twice"), r.stderr)
    }
}
