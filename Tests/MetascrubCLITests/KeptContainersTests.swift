// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import XCTest

/// What a policy keeps is read before it is kept: an IPTC caption (kept under `location`) or copyright notice
/// (kept under `share`) that states a position goes, the rest of the IPTC block stays. Judged by exiftool.
final class KeptContainersTests: XCTestCase {
    var tmp = ""

    override func setUp() { tmp = Harness.makeTemp("kept") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: tmp) }

    func iptc(_ path: String) -> [String: Any] {
        let r = Harness.exec("exiftool", ["-j", "-IPTC:all", path], cwd: tmp)
        return ((try? JSONSerialization.jsonObject(with: r.stdout)) as? [[String: Any]])?.first ?? [:]
    }

    func testIPTCTextHoldingAPositionIsRemovedUnderLocationAndShare() throws {
        try Harness.requireBinary()
        try Harness.require("exiftool")
        let fixture = Harness.fixture("kept/iptc-position.jpg")
        XCTAssertNotNil(iptc(fixture)["Caption-Abstract"], "the fixture must have its caption")
        // location keeps captions and authors, but not a caption that says where the photo was taken.
        let located = tmp + "/location.jpg"
        var r = Harness.metascrub(["clean", fixture, "--policy", "location", "--output", located])
        XCTAssertEqual(r.status, 0, r.out + r.stderr)
        var tags = iptc(located)
        XCTAssertNil(tags["Caption-Abstract"], "\(tags)")
        XCTAssertNil(tags["CopyrightNotice"], "\(tags)")
        XCTAssertEqual(tags["By-line"] as? String, "CANARY-IPTC-BYLINE", "\(tags)")
        // share keeps the copyright notice and the by-line, but not a notice holding a position.
        let shared = tmp + "/share.jpg"
        r = Harness.metascrub(["clean", fixture, "--policy", "share", "--output", shared])
        XCTAssertEqual(r.status, 0, r.out + r.stderr)
        tags = iptc(shared)
        XCTAssertNil(tags["CopyrightNotice"], "\(tags)")
        XCTAssertEqual(tags["By-line"] as? String, "CANARY-IPTC-BYLINE", "\(tags)")
        for path in [located, shared] {
            let bytes = try XCTUnwrap(Harness.data(path))
            XCTAssertNil(bytes.range(of: Data("48.8584".utf8)), "\(path): the position is still there")
        }
        // scan -v says why: a location item inside the caption.
        let scan = Harness.metascrub(["scan", "-v", "--policy", "location", fixture])
        XCTAssertTrue(scan.out.contains("iptc:Caption-Abstract"), scan.out)
        XCTAssertTrue(scan.out.contains("inspect:location"), scan.out)
    }
}
