// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubCore
import XCTest

final class TIFFTests: XCTestCase {
    let dir = TempDir()

    func testStrictCleanRewritesTheIFDChain() {
        for name in ["le.tif", "be.tif", "tiled.tif", "photoshop.tif", "bigtiff.tif"] {
            let (report, output) = ContainerChecks.assertStrictClean("tiff/\(name)", in: dir)
            XCTAssertEqual(report.method, .remux, name)
            XCTAssertEqual(report.verification?.contentResult, .passed, name)
            let input = [UInt8](FileManager.default.contents(atPath: Fixture.path("tiff/\(name)"))!)
            let bytes = [UInt8](FileManager.default.contents(atPath: output)!)
            XCTAssertEqual(Array(bytes[0..<4]), Array(input[0..<4]), "\(name): byte order or TIFF/BigTIFF changed")
        }
    }

    func testStructuralTagsSurvive() {
        let output = ContainerChecks.assertStrictClean("tiff/be.tif", in: dir).output
        let tags = Oracle.exiftool(output)
        XCTAssertEqual(tags["IFD0:Compression"] as? Int, 5)
        XCTAssertEqual(tags["IFD0:ImageWidth"] as? Int, 48)
        XCTAssertEqual(tags["IFD0:RowsPerStrip"] as? Int, 8)
        XCTAssertNil(tags["IFD0:Make"])
        XCTAssertNil(tags["ExifIFD:DateTimeOriginal"])
        XCTAssertNil(tags["XMP-dc:Creator"])
        XCTAssertNil(tags["IPTC:By-line"])
    }

    func testThumbnailIFDIsRemoved() {
        let output = ContainerChecks.assertStrictClean("tiff/multipage-thumb.tif", in: dir, samePixels: false).output
        let frames = Tool.run(["identify", output]).stdout
        XCTAssertEqual(String(decoding: frames, as: UTF8.self).split(separator: "\n").count, 1)
        XCTAssertEqual(Oracle.pixels(Fixture.path("tiff/multipage-thumb.tif") + "[0]", autoOrient: false), Oracle.pixels(output, autoOrient: false))
        let keys = Run.scan(Fixture.path("tiff/multipage-thumb.tif")).findings
        let thumb = keys.firstIndex { $0.item.key == "tiff:IFD1" }
        XCTAssertNotNil(thumb)
        XCTAssertTrue(keys.contains { $0.item.key == "exif:Software" && $0.item.parent == thumb })
    }

    func testPartialPolicyRebuildsXmpAndIptc() {
        let output = dir.file("partial.tif")
        let report = Run.clean(Fixture.path("tiff/le.tif"), to: output, policy: ContainerChecks.keepAllButLocation)
        XCTAssertEqual(report.status, .cleaned, "\(report.error.map { "\($0)" } ?? "")")
        let tags = Oracle.exiftool(output)
        XCTAssertEqual(tags["IFD0:Make"] as? String, "CanaryMake")
        XCTAssertEqual(tags["ExifIFD:SerialNumber"] as? String, "CANARY-SERIAL-7731")
        XCTAssertEqual(tags["XMP-dc:Creator"] as? String, "CANARY-XMP-CREATOR")
        XCTAssertEqual(tags["IPTC:By-line"] as? String, "CANARY-IPTC-BYLINE")
        XCTAssertNil(tags["GPS:GPSLatitude"])
        XCTAssertNil(tags["XMP-photoshop:City"])
        XCTAssertNil(tags["IPTC:City"])
        XCTAssertEqual(Oracle.pixels(Fixture.path("tiff/le.tif"), autoOrient: false), Oracle.pixels(output, autoOrient: false))
    }

    func testOrientationIsKeptAsFallback() throws {
        // le.tif with Orientation=6 patched into IFD0: strips cannot be rotated without re-encoding.
        var bytes = [UInt8](FileManager.default.contents(atPath: Fixture.path("tiff/le.tif"))!)
        let ifd = Int(bytes[4]) | Int(bytes[5]) << 8
        let count = Int(bytes[ifd]) | Int(bytes[ifd + 1]) << 8
        guard let entry = (0..<count).map({ ifd + 2 + $0 * 12 }).first(where: { bytes[$0] == 0x12 && bytes[$0 + 1] == 0x01 }) else {
            return XCTFail("le.tif has no Orientation entry")
        }
        bytes[entry + 8] = 6
        let input = dir.file("orient6.tif")
        FileManager.default.createFile(atPath: input, contents: Data(bytes))
        let output = dir.file("orient6-out.tif")
        let report = Run.clean(input, to: output)
        XCTAssertEqual(report.status, .cleaned, "\(report.error.map { "\($0)" } ?? "")")
        XCTAssertEqual(report.findings.first { $0.item.key == "exif:Orientation" }?.outcome, .keptAsFallback)
        XCTAssertEqual(Oracle.exiftool(output)["IFD0:Orientation"] as? Int, 6)
        XCTAssertEqual(Oracle.pixels(input, autoOrient: true), Oracle.pixels(output, autoOrient: true))
    }

    func testCameraRawGoesToTheRawCleaner() {
        // A TIFF with a DNG version is a raw and goes to the raw cleaner: an 8-bit RGB "DNG" LibRaw does not
        // recognise is cleaned in place with a damaged-input note naming LibRaw (RawTests cover real raws and the
        // refusal under `damaged: refuse`).
        let report = Run.clean(Fixture.path("tiff/bad/dng-version.dng"), to: dir.file("x.dng"))
        XCTAssertEqual(report.format, "dng")
        XCTAssertTrue(report.notes.contains { $0.code == "damaged-input" && $0.message.contains("LibRaw") }, "\(report.notes)")
    }

    func testBrokenFilesAreRefused() {
        ContainerChecks.assertRefused("tiff/bad/truncated.tif", in: dir, code: "truncated")
        ContainerChecks.assertRefused("tiff/bad/ifd-loop.tif", in: dir, code: "malformed")
    }

    func testTruncatedAndCorruptedInputNeverCrashes() {
        for name in ["le.tif", "be.tif", "tiled.tif", "multipage-thumb.tif", "bigtiff.tif", "photoshop.tif"] {
            ContainerChecks.assertRobust("tiff/\(name)", in: dir)
        }
    }
}
