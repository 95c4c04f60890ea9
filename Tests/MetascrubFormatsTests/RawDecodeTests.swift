// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubCore
@testable import MetascrubFormats
import XCTest

/// Camera raws cleaned without refusals (issue 24) and Canon's lens serial (issue 23): what LibRaw needs stays with
/// its reason, everything else goes, and LibRaw's own dcraw_emu decodes the same pixels (`-4`, and `-4 -w` where
/// the camera's white balance matters), judged apart by `exiftool -j -a -G1 -ee -u`.
final class RawDecodeTests: XCTestCase {
    let dir = TempDir()

    /// Tags ExifTool still shows that identify the camera, its owner, the place, the time or the file.
    static let identifying = ["Serial", "Owner", "Artist", "Copyright", "GPS", "Date", "UniqueID", "OriginalRawFile", "ShutterCount"]

    static func exiftool(_ path: String) -> [String: Any] {
        let run = Tool.run(["exiftool", "-j", "-a", "-G1", "-ee", "-u", path])
        XCTAssertEqual(run.status, 0, "exiftool failed: \(run.stderr)")
        let json = try? JSONSerialization.jsonObject(with: run.stdout) as? [[String: Any]]
        return json?.first ?? [:]
    }

    /// Identifying tags left (System and Composite tags, and values blanked in place: zeroed dates, numbers and
    /// hex strings, empty text, aside).
    static func identifyingLeft(_ path: String) -> [String] {
        exiftool(path).compactMap { key, value in
            let group = key.split(separator: ":").first.map(String.init) ?? ""
            guard !["System", "Composite", "ExifTool", "File"].contains(group), identifying.contains(where: key.contains) else { return nil }
            if let text = value as? String, text.allSatisfy({ "0: ".contains($0) }) { return nil }
            if let number = value as? NSNumber, number == 0 { return nil }
            return key
        }.sorted()
    }

    /// Every value ExifTool shows for `tag` (a JSON object keeps one of several tags of the same name).
    static func values(_ path: String, _ tag: String) -> [String] {
        let run = Tool.run(["exiftool", "-a", "-s3", "-\(tag)", path])
        XCTAssertEqual(run.status, 0, "exiftool failed: \(run.stderr)")
        return String(decoding: run.stdout, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    /// dcraw_emu's 16-bit PPM (`-4`, plus `-w` for the camera's white balance) on standard output.
    static func ppm(_ path: String, cameraWhiteBalance: Bool = false) -> Data {
        let run = Tool.run(["dcraw_emu", "-4"] + (cameraWhiteBalance ? ["-w"] : []) + ["-Z", "-", path])
        XCTAssertEqual(run.status, 0, "dcraw_emu failed on \(path): \(run.stderr)")
        XCTAssertGreaterThan(run.stdout.count, 1000, "dcraw_emu wrote no image for \(path)")
        return run.stdout
    }

    /// Cleans `fixture` under strict: cleaned, LibRaw's pixels identical (both ways), a fixed point. Returns the
    /// report and the output.
    func cleanProvingPixels(_ fixture: String) -> (FileReport, String) { Self.cleanProvingPixels(fixture, in: dir) }

    static func cleanProvingPixels(_ fixture: String, in dir: TempDir) -> (FileReport, String) {
        let input = Fixture.path(fixture)
        let output = dir.file((fixture as NSString).lastPathComponent)
        let report = Run.clean(input, to: output)
        XCTAssertEqual(report.status, .cleaned, report.error?.message ?? "")
        XCTAssertEqual(report.verification?.contentResult, .passed)
        XCTAssertEqual(Self.ppm(input), Self.ppm(output), "LibRaw decodes other pixels")
        XCTAssertEqual(Self.ppm(input, cameraWhiteBalance: true), Self.ppm(output, cameraWhiteBalance: true), "LibRaw reads another white balance")
        for canary in ContainerChecks.canaries(fixture) {
            XCTAssertFalse(Oracle.contains(output, canary), "canary \(canary) left in the output")
        }
        XCTAssertEqual(Run.scan(output).status, .clean)
        let second = dir.file("second-" + (fixture as NSString).lastPathComponent)
        XCTAssertEqual(Run.clean(output, to: second).status, .clean)
        return (report, output)
    }

    func testAdobeConverterDNGCleansWithItsMatricesAndWithoutMakeOrModel() {
        let input = Fixture.path("raw/adobe.dng")
        let before = Self.identifyingLeft(input)
        for key in ["IFD0:CameraSerialNumber", "IFD0:OriginalRawFileName", "IFD0:RawDataUniqueID", "IFD0:Artist", "Canon:LensSerialNumber",
                    "Canon:SerialNumber", "Canon:OwnerName", "ExifIFD:LensSerialNumber"] {
            XCTAssertTrue(before.contains(key) || Self.exiftool(input)[key] != nil, "the fixture lacks \(key)")
        }
        let (report, output) = cleanProvingPixels("raw/adobe.dng")
        XCTAssertEqual(Self.identifyingLeft(output), [])
        let tags = Self.exiftool(output)
        XCTAssertNil(tags["IFD0:Make"], "a DNG decodes the same without Make")
        XCTAssertNil(tags["IFD0:Model"])
        XCTAssertNil(tags["IFD0:DNGPrivateData"])
        XCTAssertNotNil(tags["IFD0:ColorMatrix1"])
        XCTAssertEqual(report.findings.first { $0.item.key == "exif:UniqueCameraModel" }?.reason, RawTIFFScanner.uniqueCameraModelReason)
        // The original raw file goes as an embedded file; the private maker note's Canon fields are listed under it.
        XCTAssertEqual(report.findings.first { $0.item.key == "exif:OriginalRawFileData" }?.item.category, .embedded)
        XCTAssertEqual(report.findings.first { $0.item.key == "exif:OriginalRawFileData" }?.disposition, .remove)
        XCTAssertTrue(report.findings.contains { $0.item.key == "makernote:Canon.LensSerialNumber" && $0.item.location.contains("0xC634") })
        XCTAssertFalse(report.findings.contains { $0.reason == RawDecodeBisection.neededReason })
    }

    /// White balance enciphered with the serial number and shutter count: both cleared (SerialNumber "0",
    /// ShutterCount 0) and the enciphered blocks re-enciphered with the new key, so LibRaw deciphers the same
    /// multipliers and ExifTool the same white balance; LensIDNumber inside the enciphered LensData deciphers to 0.
    func testNikonEncipheredWhiteBalanceCleansWithTheSameMultipliers() throws {
        let input = Fixture.path("raw/encrypted.nef")
        let original = Self.exiftool(input)
        XCTAssertEqual(original["Nikon:SerialNumber"] as? Int, 7654321)
        XCTAssertEqual(original["Nikon:ShutterCount"] as? Int, 4242)
        XCTAssertEqual(original["Nikon:LensIDNumber"] as? Int, 147)
        let (report, output) = cleanProvingPixels("raw/encrypted.nef")
        let tags = Self.exiftool(output)
        XCTAssertEqual(tags["Nikon:WB_RGGBLevels"] as? String, original["Nikon:WB_RGGBLevels"] as? String, "white balance deciphers differently")
        XCTAssertEqual(tags["Nikon:SerialNumber"] as? Int, 0, "the serial is cleared")
        XCTAssertEqual(tags["Nikon:ShutterCount"] as? Int, 0, "the shutter count is cleared")
        XCTAssertEqual(tags["Nikon:LensIDNumber"] as? Int, 0)
        XCTAssertEqual(tags["Nikon:LensDataVersion"] as? String, original["Nikon:LensDataVersion"] as? String)
        for gone in ["IFD0:Artist", "IFD0:Copyright", "ExifIFD:SerialNumber", "ExifIFD:DateTimeOriginal", "GPS:GPSLatitude"] {
            XCTAssertNil(tags[gone], "\(gone) is still there")
        }
        // The key changed, so the enciphered white balance is stored as other bytes (re-enciphered, not left).
        let before = try XCTUnwrap(FileManager.default.contents(atPath: input)), after = try XCTUnwrap(FileManager.default.contents(atPath: output))
        let version = Data("0204".utf8)
        let colour = try XCTUnwrap(before.range(of: version)).lowerBound
        XCTAssertNotEqual(before[colour + 284..<colour + 324], after[colour + 284..<colour + 324], "ColorBalance was not re-enciphered")
        // A NEF is identified by its make and model: the bisection keeps them, with the reason.
        for key in ["exif:Make", "exif:Model"] {
            XCTAssertEqual(report.findings.first { $0.item.key == key }?.reason, RawDecodeBisection.neededReason, key)
        }
        XCTAssertEqual(report.findings.filter { $0.reason == RawDecodeBisection.neededReason }.count, 2)
    }

    /// Canon's maker note names the model again (CanonImageType, CanonModelID): each is decided like IFD0's Model,
    /// never left unlisted: kept with the reason where LibRaw cannot try the raw, removed where a DNG decodes the
    /// same without it (the maker note is kept under share, so only the field goes).
    func testCanonModelFieldsAreDecidedLikeTheModel() {
        let stub = Run.scan(Fixture.path("raw/skeleton.cr3"))
        let imageType = stub.findings.first { $0.item.key == "makernote:Canon.ImageType" }
        XCTAssertEqual(imageType?.disposition, .keep)
        XCTAssertEqual(imageType?.reason, RawDecodeBisection.untestedReason)
        let output = dir.file("canon-share.dng")
        let report = Run.clean(Fixture.path("raw/canon.dng"), to: output, policy: "share")
        XCTAssertEqual(report.status, .cleaned, report.error?.message ?? "")
        XCTAssertEqual(report.findings.first { $0.item.key == "makernote:Canon.ImageType" }?.disposition, .remove)
        XCTAssertNotNil(Self.exiftool(Fixture.path("raw/canon.dng"))["Canon:CanonImageType"], "the fixture lacks CanonImageType")
        XCTAssertNil(Self.exiftool(output)["Canon:CanonImageType"])
        XCTAssertEqual(Self.ppm(Fixture.path("raw/canon.dng")), Self.ppm(output))
    }

    /// A Nikon block of a version no reader's table lists may or may not be enciphered, so it is not re-enciphered:
    /// the key entries get key-equivalent values instead (8 bits of key each) and every block deciphers as before.
    func testNikonUnknownBlockVersionKeepsTheKeyInstead() throws {
        var bytes = [UInt8](FileManager.default.contents(atPath: Fixture.path("raw/encrypted.nef"))!)
        let version = Array("0204".utf8)
        let hits = (0...bytes.count - 4).filter { Array(bytes[$0..<$0 + 4]) == version }
        XCTAssertEqual(hits.count, 2, "ColorBalance and LensData versions")
        bytes.replaceSubrange(hits[1]..<hits[1] + 4, with: Array("0999".utf8))
        let input = dir.file("ld-unknown.nef"), output = dir.file("ld-unknown-clean.nef")
        XCTAssertTrue(FileManager.default.createFile(atPath: input, contents: Data(bytes)))
        let report = Run.clean(input, to: output)
        XCTAssertEqual(report.status, .cleaned, report.error?.message ?? "")
        let original = Self.exiftool(input), tags = Self.exiftool(output)
        XCTAssertEqual(tags["Nikon:SerialNumber"] as? Int, 7654321 % 256, "the serial keeps only its key byte")
        XCTAssertEqual(tags["Nikon:ShutterCount"] as? Int, (4242 & 0xFF) ^ (4242 >> 8), "the shutter count keeps only its key byte")
        XCTAssertEqual(tags["Nikon:WB_RGGBLevels"] as? String, original["Nikon:WB_RGGBLevels"] as? String)
        XCTAssertEqual(Self.ppm(input, cameraWhiteBalance: true), Self.ppm(output, cameraWhiteBalance: true))
    }

    /// Panasonic RW2: the preview's EXIF (its own Artist, Software, GPS) goes with the JpgFromRaw's APP1, the RW2's
    /// IFD0 fields, XMP and IPTC with their entries; LibRaw's Panasonic decoder reads the same sensor data.
    func testPanasonicRW2CleansWithItsPreviewsEXIF() {
        let input = Fixture.path("raw/panasonic.rw2")
        XCTAssertTrue(Self.identifyingLeft(input).contains("IFD0:Artist"), "the fixture lacks an artist")
        let (report, output) = cleanProvingPixels("raw/panasonic.rw2")
        XCTAssertEqual(Self.identifyingLeft(output), [])
        let tags = Self.exiftool(output)
        for gone in ["IFD0:Software", "XMP-dc:Creator", "IPTC:By-line", "GPS:GPSLatitude"] {
            XCTAssertNil(tags[gone], "\(gone) is still there")
        }
        XCTAssertEqual(report.findings.first { $0.item.key == "preview:APP1" }?.item.category, .embedded)
    }

    /// Plain (version 0101) Nikon lens data: exiv2's NikonLd2.LensIDNumber, once refused as "cannot be located",
    /// is found in the LensData entry and blanked. Made from encrypted.nef with its LensData version renamed.
    func testNikonPlainLensDataFieldsAreLocated() throws {
        var bytes = [UInt8](FileManager.default.contents(atPath: Fixture.path("raw/encrypted.nef"))!)
        let version = Array("0204".utf8)
        let hits = (0...bytes.count - 4).filter { Array(bytes[$0..<$0 + 4]) == version }
        XCTAssertEqual(hits.count, 2, "ColorBalance and LensData versions")
        bytes.replaceSubrange(hits[1]..<hits[1] + 4, with: Array("0101".utf8))
        let input = dir.file("ld2.nef"), output = dir.file("ld2-clean.nef")
        XCTAssertTrue(FileManager.default.createFile(atPath: input, contents: Data(bytes)))
        XCTAssertNotEqual(Self.exiftool(input)["Nikon:LensIDNumber"] as? Int, 0)
        let report = Run.clean(input, to: output)
        XCTAssertEqual(report.status, .cleaned, report.error?.message ?? "")
        XCTAssertTrue(report.findings.contains { $0.item.key == "makernote:NikonLd2.LensIDNumber" && $0.disposition == .remove })
        XCTAssertEqual(Self.exiftool(output)["Nikon:LensIDNumber"] as? Int, 0)
        XCTAssertEqual(Self.ppm(input, cameraWhiteBalance: true), Self.ppm(output, cameraWhiteBalance: true))
    }

    /// Canon's LensInfo holds the lens serial (ExifTool's Canon:LensSerialNumber): blanked in a CR3's CMT3 and a
    /// CR2's maker note.
    func testCanonLensSerialIsBlankedInCR3AndCR2() {
        for fixture in ["raw/skeleton.cr3", "raw/stub.cr2"] {
            let input = Fixture.path(fixture), output = dir.file((fixture as NSString).lastPathComponent)
            XCTAssertNotNil(Self.exiftool(input)["Canon:LensSerialNumber"], "\(fixture) lacks a lens serial")
            let report = Run.clean(input, to: output)
            XCTAssertEqual(report.status, .cleaned, report.error?.message ?? "")
            XCTAssertNil(Self.exiftool(output)["Canon:LensSerialNumber"], fixture)
            XCTAssertTrue(report.findings.contains { $0.item.key == "makernote:Canon.LensSerialNumber" && $0.disposition == .remove }, fixture)
            XCTAssertEqual(Run.clean(output, to: dir.file("again-" + (fixture as NSString).lastPathComponent)).status, .clean)
        }
    }

    /// Sensor data that runs past the end of the file is not decoded (LibRaw would read memory that is not the
    /// file's): the raw is cleaned in place as undecodable, every other byte proven identical, and Make and Model
    /// stay because whether LibRaw needs them cannot be tested. Made from encrypted.nef by a strip length past EOF.
    func testRawWhoseSensorDataRunsPastTheEndIsCleanedAsUndecodable() throws {
        var bytes = [UInt8](FileManager.default.contents(atPath: Fixture.path("raw/encrypted.nef"))!)
        // StripByteCounts (0x0117, LONG, 1) of the sensor-data SubIFD: 6144 becomes 1 MiB.
        let entry: [UInt8] = [0x17, 0x01, 0x04, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x18, 0x00, 0x00]
        let at = try XCTUnwrap((0...bytes.count - entry.count).first { Array(bytes[$0..<$0 + entry.count]) == entry })
        bytes[at + 10] = 0x10
        let input = dir.file("cut.nef"), output = dir.file("cut-clean.nef")
        XCTAssertTrue(FileManager.default.createFile(atPath: input, contents: Data(bytes)))
        let report = Run.clean(input, to: output)
        XCTAssertEqual(report.status, .cleaned, report.error?.message ?? "")
        XCTAssertTrue(report.notes.contains { $0.code == "damaged-input" && $0.message.contains("past the end of the file, so LibRaw") }, "\(report.notes)")
        for key in ["exif:Make", "exif:Model"] {
            XCTAssertEqual(report.findings.first { $0.item.key == key }?.reason, RawDecodeBisection.untestedReason, key)
        }
        XCTAssertNil(Self.exiftool(output)["IFD0:Artist"])
        XCTAssertEqual(Run.clean(output, to: dir.file("cut-again.nef")).status, .clean)
    }

    /// Fujifilm's detected faces (FacesDetected, FacePositions: numbers to exiv2) and internal serial go with the
    /// RAF's maker note fields.
    func testFujifilmFacesAndSerialGo() {
        let input = Fixture.path("raw/skeleton.raf"), output = dir.file("skeleton.raf")
        XCTAssertEqual(Self.exiftool(input)["FujiFilm:FacesDetected"] as? Int, 2)
        let report = Run.clean(input, to: output)
        XCTAssertEqual(report.status, .cleaned, report.error?.message ?? "")
        let tags = Self.exiftool(output)
        for gone in ["FujiFilm:FacesDetected", "FujiFilm:FacePositions", "FujiFilm:InternalSerialNumber"] {
            XCTAssertNil(tags[gone], "\(gone) is still there")
        }
        XCTAssertEqual(Self.identifyingLeft(output), [])
        XCTAssertEqual(Run.clean(output, to: dir.file("again.raf")).status, .clean)
    }

    func testBisectionFindsTheSmallestNeededSet() throws {
        var calls = 0
        let needed: Set = [3, 11]
        let found = try RawDecodeBisection.smallestNeeded(Array(0..<16)) { kept in
            calls += 1
            return needed.isSubset(of: kept)
        }
        XCTAssertEqual(Set(found ?? []), needed)
        XCTAssertLessThan(calls, 16, "a bisection, not one decode per item")
        XCTAssertEqual(try RawDecodeBisection.smallestNeeded([1, 2]) { _ in true }, [])
    }

    /// A sensitive field the raw needs refuses the clean, naming it; Make does not.
    func testSensitiveFieldsTheRawNeedsAreNamed() {
        let serial = MetadataItem(key: "makernote:Nikon3.SerialNumber", category: .device, location: "MakerNote/Nikon3.SerialNumber")
        let make = MetadataItem(key: "exif:Make", category: .device, location: "IFD0/0x010F")
        let findings = [serial, make].map {
            Finding(item: $0, disposition: .remove, rule: "test").keptInstead(because: RawDecodeBisection.neededReason)
        }
        let layout = RawTIFFLayout(structure: TIFFStructure(order: .little, isBig: false, fileSize: 0, firstIFD: 0))
        XCTAssertEqual(RawDecodeBisection.sensitiveNeeded(findings, layout: layout), ["makernote:Nikon3.SerialNumber at MakerNote/Nikon3.SerialNumber"])
    }
}
