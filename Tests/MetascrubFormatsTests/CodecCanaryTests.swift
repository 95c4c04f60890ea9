// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubCore
import XCTest

/// The residue proof never cries wolf over bytes every encoder writes: an EXIF thumbnail coded with the standard
/// Huffman tables (as cameras and libjpeg write it) shares those tables with any JPEG encoded afterwards, so
/// the upright re-encode of a photo carrying one, and a HEIC→JPEG conversion (ConversionTests), must clean.
final class CodecCanaryTests: XCTestCase {
    static var reencoding: Policy {
        var policy = Run.policy("strict")
        policy.allowReencode = true
        return policy
    }

    /// The fixture's photo is coded with optimised tables, so only its removed thumbnail holds the standard ones
    /// the re-encode writes: before, the proof refused it ("exif:ThumbnailImage at byte 365").
    func testUprightReencodeOfAPhotoWithAStandardTableThumbnailCleans() throws {
        try Tool.require("exiftool", "convert", "compare", "djpeg")
        let tmp = TempDir()
        let input = Fixture.path("structure/thumb-optimized-6.jpg"), output = tmp.file("upright.jpg")
        XCTAssertNotNil(Oracle.exiftool(input)["IFD1:ThumbnailImage"], "fixture lost its thumbnail")
        let report = Run.clean(input, to: output, policy: Self.reencoding)
        XCTAssertEqual(report.status, .cleaned, report.error?.message ?? "")
        XCTAssertEqual(report.method, .reencode)
        XCTAssertEqual(report.verification?.rescan, .passed)
        XCTAssertNil(Oracle.exiftool(output)["IFD0:Orientation"], "orientation tag left")
        XCTAssertNil(Oracle.exiftool(output)["IFD1:ThumbnailImage"], "thumbnail left")
        XCTAssertFalse(Oracle.contains(output, "CANARY-THUMBPHOTO-ARTIST"))
        // Upright and the same picture: ImageMagick's auto-oriented render of the original, by PSNR.
        let reference = tmp.file("ref.png")
        XCTAssertEqual(Tool.run(["convert", input, "-auto-orient", reference]).status, 0)
        let measured = Tool.run(["compare", "-metric", "PSNR", reference, output, "null:"]).stderr
        let db = Double(measured.split(separator: " ").first ?? "") ?? (measured.hasPrefix("inf") ? .infinity : 0)
        XCTAssertGreaterThanOrEqual(db, 40, "ImageMagick PSNR against the auto-oriented original: \(measured)")
        XCTAssertEqual(Tool.run(["djpeg", "-outfile", tmp.file("out.ppm"), output]).status, 0, "djpeg cannot decode it")
        XCTAssertEqual(FileProcessor(options: ProcessingOptions(policy: Self.reencoding))
            .scan(InputFile(path: output, relative: "upright.jpg")).status, .clean, "not a fixed point")
    }
}
