// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubCore
import XCTest

/// Camera raws (issue 18), cleaned in place: judged by ExifTool (what is left), LibRaw's own tools (dcraw_emu
/// decodes the same image, raw-identify still reads the file) and ImageMagick (the preview still shows).
final class RawTests: XCTestCase {
    let dir = TempDir()
    let dng = Fixture.path("raw/canon.dng")

    func testStrictCleanRemovesIdentifyingFieldsAndDecodesTheSame() throws {
        let output = dir.file("canon.dng")
        let report = Run.clean(dng, to: output)
        XCTAssertEqual(report.status, .cleaned, "\(report.error.map { "\($0)" } ?? "")")
        XCTAssertEqual(report.verification?.contentResult, .passed)
        let before = [UInt8](FileManager.default.contents(atPath: dng)!), after = [UInt8](FileManager.default.contents(atPath: output)!)
        XCTAssertEqual(before.count, after.count, "an in-place clean keeps the size")
        for canary in ContainerChecks.canaries("raw/canon.dng") {
            XCTAssertFalse(Oracle.contains(output, canary), "canary \(canary) left in the output")
        }
        let tags = Oracle.exiftool(output)
        for gone in ["IFD0:Artist", "IFD0:Copyright", "IFD0:Software", "IFD0:ModifyDate", "IFD0:CameraSerialNumber", "ExifIFD:DateTimeOriginal",
                     "ExifIFD:OwnerName", "ExifIFD:SerialNumber", "Canon:OwnerName", "Canon:SerialNumber", "GPS:GPSLatitude",
                     "XMP-dc:Creator", "IPTC:By-line"] {
            XCTAssertNil(tags[gone], "\(gone) is still there")
        }
        // What the converter needs stays.
        XCTAssertEqual(tags["IFD0:Make"] as? String, "Canon")
        XCTAssertEqual(tags["IFD0:UniqueCameraModel"] as? String, "Fixture Camera")
        XCTAssertNotNil(tags["IFD0:ColorMatrix1"])
        XCTAssertNotNil(tags["Canon:CanonImageType"], "the rest of the maker note was kept")
        // LibRaw's command-line tools, run separately: same decoded image, still identified.
        XCTAssertEqual(try Self.dcraw(dng, in: dir, name: "before"), try Self.dcraw(output, in: dir, name: "after"))
        XCTAssertEqual(Tool.run(["raw-identify", output]).status, 0)
        // The preview lost its EXIF but shows the same pixels.
        let previewBefore = dir.file("preview-before.jpg"), previewAfter = dir.file("preview-after.jpg")
        FileManager.default.createFile(atPath: previewBefore, contents: Tool.run(["exiftool", "-b", "-PreviewImage", dng]).stdout)
        FileManager.default.createFile(atPath: previewAfter, contents: Tool.run(["exiftool", "-b", "-PreviewImage", output]).stdout)
        XCTAssertEqual(Oracle.exiftool(previewBefore)["IFD0:Artist"] as? String, "CANARY-PREVIEW-ARTIST")
        XCTAssertNil(Oracle.exiftool(previewAfter)["IFD0:Artist"])
        XCTAssertNil(Oracle.exiftool(previewAfter)["GPS:GPSLatitude"])
        XCTAssertNotNil(Oracle.pixels(previewBefore, autoOrient: false))
        XCTAssertEqual(Oracle.pixels(previewBefore, autoOrient: false), Oracle.pixels(previewAfter, autoOrient: false))
    }

    func testCleanIsAFixedPoint() {
        let first = dir.file("first.dng"), second = dir.file("second.dng")
        XCTAssertEqual(Run.clean(dng, to: first).status, .cleaned)
        XCTAssertEqual(Run.scan(first).status, .clean)
        XCTAssertEqual(Run.clean(first, to: second).status, .clean)
        XCTAssertEqual(FileManager.default.contents(atPath: first), FileManager.default.contents(atPath: second))
    }

    func testPartialPolicyKeepsWhatItKeeps() throws {
        let output = dir.file("partial.dng")
        let report = Run.clean(dng, to: output, policy: ContainerChecks.keepAllButLocation)
        XCTAssertEqual(report.status, .cleaned, "\(report.error.map { "\($0)" } ?? "")")
        let tags = Oracle.exiftool(output)
        XCTAssertNil(tags["GPS:GPSLatitude"])
        XCTAssertNil(tags["XMP-photoshop:City"])
        XCTAssertEqual(tags["XMP-dc:Creator"] as? String, "CANARY-XMP-CREATOR", "the XMP packet was rebuilt in place")
        XCTAssertEqual(tags["IFD0:Artist"] as? String, "CANARY-ARTIST-Alice")
        XCTAssertEqual(tags["Canon:OwnerName"] as? String, "CANARY-OWNER")
        XCTAssertEqual(try Self.dcraw(dng, in: dir, name: "p-before"), try Self.dcraw(output, in: dir, name: "p-after"))
    }

    func testRawLibRawCannotDecodeIsRefused() throws {
        // An 8-bit RGB TIFF that says it is a DNG: LibRaw cannot decode it, so with something to remove (an
        // Artist added by ExifTool) it is refused rather than cleaned unproven.
        let input = dir.file("undecodable.dng")
        try FileManager.default.copyItem(atPath: Fixture.path("tiff/bad/dng-version.dng"), toPath: input)
        XCTAssertEqual(Tool.run(["exiftool", "-q", "-overwrite_original", "-Artist=CANARY-ARTIST-Alice", input]).status, 0)
        let identify = Tool.run(["raw-identify", input])
        XCTAssertTrue((String(decoding: identify.stdout, as: UTF8.self) + identify.stderr).contains("Cannot decode"),
                      "LibRaw should not decode this")
        let output = dir.file("undecodable-out.dng")
        let report = Run.clean(input, to: output)
        XCTAssertEqual(report.status, .error)
        XCTAssertEqual(report.error?.code, "unsupported")
        XCTAssertTrue(report.error?.message.contains("LibRaw") ?? false, report.error?.message ?? "")
        XCTAssertFalse(FileManager.default.fileExists(atPath: output))
    }

    func testDamagedRawsNeverCrash() {
        ContainerChecks.assertRobust("raw/canon.dng", in: dir)
    }

    /// dcraw_emu's 16-bit PPM of a raw (a PPM holds no metadata, so equal bytes mean an equal image).
    static func dcraw(_ path: String, in dir: TempDir, name: String) throws -> Data {
        let copy = dir.file("\(name).dng")
        try? FileManager.default.removeItem(atPath: copy)
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        let run = Tool.run(["dcraw_emu", "-4", copy])
        XCTAssertEqual(run.status, 0, "dcraw_emu failed: \(run.stderr)")
        return FileManager.default.contents(atPath: copy + ".ppm") ?? Data()
    }
}
