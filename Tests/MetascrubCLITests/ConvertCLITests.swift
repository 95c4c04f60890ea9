// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import XCTest

/// `clean --convert` on the command line (issue 16): names, refusals, and the report's `reencode` record.
final class ConvertCLITests: XCTestCase {
    func testConvertMirrorsUnderTheNewNameAndReportsTheReencode() throws {
        let dir = Harness.makeTemp("convert")
        Harness.copy("heic/exif-xmp.heic", to: dir + "/in/IMG_0001.HEIC")
        Harness.copy("jpeg/gps-full.jpg", to: dir + "/in/other.jpg")
        let r = Harness.metascrub(["clean", "--convert", "jpeg", "in", "--output-dir", "out", "--json", "--no-config"], cwd: dir)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(Harness.exists(dir + "/out/IMG_0001.jpg"))
        XCTAssertFalse(Harness.exists(dir + "/out/IMG_0001.HEIC"))
        XCTAssertTrue(Harness.exists(dir + "/out/other.jpg"), "other files are cleaned and mirrored as usual")
        let files = Harness.json(r.stdout)["files"] as? [[String: Any]] ?? []
        let converted = try XCTUnwrap(files.first { ($0["path"] as? String)?.hasSuffix("IMG_0001.HEIC") == true })
        XCTAssertEqual(converted["method"] as? String, "reencode")
        let reencode = try XCTUnwrap(converted["reencode"] as? [String: Any])
        XCTAssertGreaterThanOrEqual(reencode["psnr_db"] as? Double ?? 0, 40)
        XCTAssertEqual(reencode["to"] as? String, "jpeg")
        let other = try XCTUnwrap(files.first { ($0["path"] as? String)?.hasSuffix("other.jpg") == true })
        XCTAssertNotEqual(other["method"] as? String, "reencode", "a JPEG is not converted, only cleaned")
    }

    func testConvertRefusesInPlaceAndQualityNeedsConvert() {
        let dir = Harness.makeTemp("convert-usage")
        Harness.copy("heic/exif-xmp.heic", to: dir + "/a.heic")
        let before = Harness.data(dir + "/a.heic")
        XCTAssertEqual(Harness.metascrub(["clean", "--convert", "jpeg", "--in-place", "a.heic", "--no-config"], cwd: dir).status, 2)
        XCTAssertEqual(Harness.metascrub(["clean", "--quality", "90", "a.heic", "--output", "b.jpg", "--no-config"], cwd: dir).status, 2)
        XCTAssertEqual(Harness.metascrub(["clean", "--convert", "jpeg", "--quality", "0", "a.heic", "--output", "b.jpg", "--no-config"], cwd: dir).status, 2)
        XCTAssertEqual(Harness.data(dir + "/a.heic"), before)
        XCTAssertFalse(Harness.exists(dir + "/b.jpg"))
    }

    /// TIFF converts under its new name; a second input that would take the same name is an error, not an
    /// overwrite (scan.tif and scan.tiff both map to scan.png).
    func testTIFFConvertsUnderTheNewNameAndCollisionsAreErrors() throws {
        let dir = Harness.makeTemp("convert-tiff")
        Harness.copy("tiff/orient/lzw-6.tif", to: dir + "/in/photo.tif")
        Harness.copy("tiff/orient/deflate-6.tif", to: dir + "/in/scan.tif")
        Harness.copy("tiff/orient/none-6.tif", to: dir + "/in/scan.tiff")
        let r = Harness.metascrub(["clean", "--convert", "png", "in", "--output-dir", "out", "--json", "--no-config"], cwd: dir)
        XCTAssertNotEqual(r.status, 0, "the name collision must fail the run")
        XCTAssertTrue(Harness.exists(dir + "/out/photo.png"))
        XCTAssertFalse(Harness.exists(dir + "/out/photo.tif"))
        let files = Harness.json(r.stdout)["files"] as? [[String: Any]] ?? []
        let photo = try XCTUnwrap(files.first { ($0["path"] as? String)?.hasSuffix("photo.tif") == true })
        XCTAssertEqual(photo["method"] as? String, "reencode")
        XCTAssertEqual((photo["reencode"] as? [String: Any])?["from"] as? String, "tiff")
        let scans = files.filter { ($0["path"] as? String)?.contains("/scan.tif") == true }
        XCTAssertEqual(scans.count, 2)
        XCTAssertEqual(scans.filter { $0["status"] as? String == "error" }.count, 1, "exactly one of the two is refused")
    }
}
