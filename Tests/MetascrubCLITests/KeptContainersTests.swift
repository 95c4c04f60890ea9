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

extension KeptContainersTests {
    /// Blocks inside EXIF entries and a GPS IFD linked from the Exif IFD are read as ExifTool reads them: under
    /// `location` every position goes (the GPS IFD, the XMP and IPTC blocks and the UNDEFINED-typed description
    /// that state one) and the camera make stays.
    func testBlocksInsideExifAreRead() throws {
        try Harness.requireBinary()
        try Harness.require("exiftool")
        let fixture = Harness.fixture("kept/exif-blocks.jpg")
        let out = tmp + "/location.jpg"
        let r = Harness.metascrub(["clean", fixture, "--policy", "location", "--output", out])
        XCTAssertEqual(r.status, 0, r.out + r.stderr)
        let read = Harness.exec("exiftool", ["-j", "-a", "-G1", out], cwd: tmp)
        let tags = ((try? JSONSerialization.jsonObject(with: read.stdout)) as? [[String: Any]])?.first ?? [:]
        XCTAssertEqual(tags["IFD0:Make"] as? String, "CanaryMake", "\(tags)")
        for key in tags.keys {
            XCTAssertFalse(key.hasPrefix("GPS:") || key.contains("GPS"), "\(key) left")
        }
        for key in ["IFD0:ImageDescription", "XMP-photoshop:City", "IPTC2:Caption-Abstract"] {
            XCTAssertNil(tags[key], "\(key) left: \(tags)")
        }
        let bytes = try XCTUnwrap(Harness.data(out))
        for needle in ["48.8584", "48,51.504N", "CANARY-EXIF-XMP-CITY"] {
            XCTAssertNil(bytes.range(of: Data(needle.utf8)), "\(needle) left")
        }
        let scan = Harness.metascrub(["scan", "-v", "--policy", "location", fixture])
        for key in ["exif:GPSLatitude", "xmp:photoshop:City", "iptc:Caption-Abstract", "inspect:location"] {
            XCTAssertTrue(scan.out.contains(key), "\(key) not listed:\n\(scan.out)")
        }
    }
}

extension KeptContainersTests {
    /// Photoshop resources kept or dropped whole are read first: XMP (0x0424), EXIF (0x0422) and a URL (0x040B)
    /// holding a position go under `location`; the IPTC by-line beside them stays.
    func testPhotoshopResourcesAreRead() throws {
        try Harness.requireBinary()
        try Harness.require("exiftool")
        let fixture = Harness.fixture("kept/photoshop-resources.jpg")
        let scan = Harness.metascrub(["scan", "-v", "--json", "--policy", "location", fixture])
        let findings = ((Harness.json(scan.stdout)["files"] as? [[String: Any]])?.first?["findings"] as? [[String: Any]]) ?? []
        func action(_ key: String) -> String? { findings.first { $0["key"] as? String == key }?["action"] as? String }
        XCTAssertEqual(action("xmp:photoshop:City"), "remove", "\(findings.map { $0["key"] ?? "" })")
        XCTAssertEqual(action("exif:GPSLatitude"), "remove")
        XCTAssertEqual(action("iptc:By-line"), "keep")
        let out = tmp + "/location.jpg"
        let r = Harness.metascrub(["clean", fixture, "--policy", "location", "--output", out])
        XCTAssertEqual(r.status, 0, r.out + r.stderr)
        let read = Harness.exec("exiftool", ["-j", "-a", "-G1", out], cwd: tmp)
        let tags = ((try? JSONSerialization.jsonObject(with: read.stdout)) as? [[String: Any]])?.first ?? [:]
        XCTAssertEqual(tags["IPTC:By-line"] as? String, "CANARY-PS-IPTC-BYLINE", "\(tags)")
        XCTAssertNil(tags["XMP-photoshop:City"], "\(tags)")
        XCTAssertNil(tags["Photoshop:URL"], "\(tags)")
        let bytes = try XCTUnwrap(Harness.data(out))
        XCTAssertNil(bytes.range(of: Data("48.8584".utf8)), "the URL's position is still there")
    }
}
