// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubCore
@testable import MetascrubFormats
import XCTest

/// Maker notes with layouts of their own (issue 24): Phase One's directory, Sony's enciphered blocks and SR2Private,
/// Olympus' sub-IFDs, Pentax's time and owner fields. Each fixture is decoded by LibRaw's dcraw_emu before and after
/// and judged by `exiftool -a -G1 -ee -u` (the oracles of `RawDecodeTests`).
final class MakerNoteRawTests: XCTestCase {
    let dir = TempDir()

    func cleanProvingPixels(_ fixture: String) -> (FileReport, String) { RawDecodeTests.cleanProvingPixels(fixture, in: dir) }

    /// Phase One IIQ: the maker note right after the TIFF header holds the sensor data, so its identifying values (the
    /// serial of the main directory and of the sensor calibration, dates, image number, firmware, lens) are blanked
    /// where they lie. LibRaw takes Make from the note and colour matrices by the Model (IQ180).
    func testPhaseOneIIQBlanksItsMakerNoteInPlace() {
        let input = Fixture.path("raw/phaseone.iiq")
        let before = RawDecodeTests.identifyingLeft(input)
        for key in ["PhaseOne:SerialNumber", "PhaseOne:DateTimeOriginal", "PhaseOne:UnknownDate", "IFD0:Artist", "ExifIFD:SerialNumber",
                    "GPS:GPSLatitude"] {
            XCTAssertTrue(before.contains(key), "the fixture lacks \(key)")
        }
        let (report, output) = cleanProvingPixels("raw/phaseone.iiq")
        XCTAssertEqual(RawDecodeTests.identifyingLeft(output), [])
        let tags = RawDecodeTests.exiftool(output)
        for gone in ["PhaseOne:LensModel", "PhaseOne:FirmwareVersions"] {
            XCTAssertEqual(tags[gone] as? String, "", gone)
        }
        XCTAssertNil(tags["IFD0:Make"], "LibRaw takes the make from the Phase One note")
        XCTAssertNotNil(tags["PhaseOne:ColorMatrix1"])
        for key in ["makernote:PhaseOne.SerialNumber", "makernote:PhaseOne.SensorCalibration.SerialNumber", "makernote:PhaseOne.ImageNumber"] {
            XCTAssertEqual(report.findings.first { $0.item.key == key }?.disposition, .remove, key)
        }
        XCTAssertEqual(report.findings.filter { $0.reason == RawDecodeBisection.neededReason }.map(\.item.key), ["exif:Model"])
    }

    /// LibRaw reads an IIQ's Phase One note by its magic after the header; so does the scan when no MakerNote entry
    /// points to it (made from phaseone.iiq with that entry's tag renamed). ExifTool does not show such a note: the
    /// canaries are looked for in the bytes.
    func testPhaseOneNoteWithoutAMakerNoteEntryIsFoundByItsMagic() throws {
        var bytes = [UInt8](FileManager.default.contents(atPath: Fixture.path("raw/phaseone.iiq"))!)
        let entry: [UInt8] = [0x7C, 0x92, 0x07, 0x00]
        let at = try XCTUnwrap((0...bytes.count - entry.count).first { Array(bytes[$0..<$0 + entry.count]) == entry })
        bytes[at] = 0x7D
        let input = dir.file("no-makernote.iiq"), output = dir.file("no-makernote-clean.iiq")
        XCTAssertTrue(FileManager.default.createFile(atPath: input, contents: Data(bytes)))
        XCTAssertTrue(Oracle.contains(input, "CANARY-IIQ-SERIAL"))
        let report = Run.clean(input, to: output)
        XCTAssertEqual(report.status, .cleaned, report.error?.message ?? "")
        for canary in ["CANARY-IIQ-SERIAL", "CANARY-IIQ-BACK-SN", "CANARY-LENS-MODEL"] {
            XCTAssertFalse(Oracle.contains(output, canary), canary)
        }
        XCTAssertEqual(RawDecodeTests.ppm(input, cameraWhiteBalance: true), RawDecodeTests.ppm(output, cameraWhiteBalance: true))
        XCTAssertEqual(Run.clean(output, to: dir.file("no-makernote-again.iiq")).status, .clean)
    }

    /// Phase One's oldest raw formats (RawFormat 1 and 2) XOR the sensor data with a key that is DateTimeOriginal's
    /// value: LibRaw needs the date, so the clean is refused and the refusal names it (made from phaseone.iiq).
    func testPhaseOneRawKeyedByTheDateIsRefusedNamingIt() throws {
        var bytes = [UInt8](FileManager.default.contents(atPath: Fixture.path("raw/phaseone.iiq"))!)
        // RawFormat (tag 0x010E, format 4, size 4, value 0) becomes 1.
        let entry: [UInt8] = [0x0E, 0x01, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0]
        let at = try XCTUnwrap((0...bytes.count - entry.count).first { Array(bytes[$0..<$0 + entry.count]) == entry })
        bytes[at + 12] = 1
        let input = dir.file("raw1.iiq")
        XCTAssertTrue(FileManager.default.createFile(atPath: input, contents: Data(bytes)))
        let report = Run.clean(input, to: dir.file("raw1-clean.iiq"))
        XCTAssertNotEqual(report.status, .cleaned)
        XCTAssertTrue(report.error?.message.contains("makernote:PhaseOne.DateTimeOriginal") ?? false, report.error?.message ?? "")
    }

    /// Sony's SR2Private (IFD0 0xC634, a DNG's private data tag) holds the enciphered white balance LibRaw reads: it was
    /// refused as a needed "DNGPrivateData" in every ARW. Sony's enciphered 0x2010 and 0x9050 blocks (ExifTool's byte
    /// substitution, zero to zero): the burst numbers,
    /// date, shutter counts and internal serial go where ExifTool's tables place them for the model, and decipher to
    /// zeros. ExifTool picks those tables by the Model (LibRaw reads the model from SonyModelID), so Model stays, with
    /// its reason.
    func testSonyEncipheredFieldsAreBlankedWhereExifToolPlacesThem() {
        let input = Fixture.path("raw/sony.arw")
        let original = RawDecodeTests.exiftool(input)
        XCTAssertEqual(original["Sony:ShutterCount"] as? Int, 12345)
        XCTAssertEqual(original["Sony:ShutterCount3"] as? Int, 12346)
        XCTAssertEqual(original["Sony:InternalSerialNumber"] as? String, "a1b2c3d4")
        XCTAssertEqual(RawDecodeTests.values(input, "Sony:SonyDateTime"), ["2021:07:14 10:11:12", "2021:07:14 10:11:12"], "0x2010's and ShotInfo's")
        XCTAssertEqual(original["Sony:FacesDetected"] as? Int, 1)
        XCTAssertNotNil(original["Sony:Face1Position"])
        let (report, output) = cleanProvingPixels("raw/sony.arw")
        XCTAssertEqual(RawDecodeTests.identifyingLeft(output), [])
        let tags = RawDecodeTests.exiftool(output)
        XCTAssertEqual(tags["IFD0:Model"] as? String, "ILCE-3000")
        XCTAssertEqual(tags["SR2SubIFD:WB_RGGBLevels"] as? String, "2100 1024 1024 1600", "SR2Private is raw data, not an item")
        XCTAssertEqual(report.findings.first { $0.item.key == "exif:Model" }?.reason, RawTIFFScanner.sonyModelReason)
        XCTAssertEqual(tags["Sony:ShutterCount"] as? Int, 0)
        XCTAssertNil(tags["Sony:ShutterCount3"], "ExifTool shows no ShutterCount3 of 0")
        XCTAssertEqual(tags["Sony:InternalSerialNumber"] as? String, "00000000")
        XCTAssertEqual(RawDecodeTests.values(output, "Sony:SonyDateTime"), ["0000:00:00 00:00:00", ""])
        XCTAssertEqual(tags["Sony:FacesDetected"] as? Int, 0)
        XCTAssertNil(tags["Sony:Face1Position"])
        XCTAssertEqual(tags["Sony:SequenceFileNumber"] as? Int, 1, "stored as 0 (ExifTool counts from one)")
        for key in ["makernote:Sony9050.ShutterCount", "makernote:Sony9050.ShutterCount3", "makernote:Sony9050.InternalSerialNumber",
                    "makernote:Sony2010.SonyDateTime", "makernote:SonyShotInfo.SonyDateTime", "makernote:SonyShotInfo.FacePositions"] {
            XCTAssertEqual(report.findings.first { $0.item.key == key }?.disposition, .remove, key)
        }
    }

    func testSonyFieldsFollowExifToolsTablesByModel() {
        let lengths: [UInt16: Int64] = [0x2010: 6400, 0x9050: 944]
        func fields(_ model: String) -> [String] {
            SonyMakerNote.fields(model: model, lengths: lengths).map { "\(String(format4hex: $0.tag))@\($0.offset):\($0.name)" }
        }
        XCTAssertEqual(fields("ILCE-7RM3"), ["0x9050@58:ShutterCount", "0x9050@82:ShutterCount2", "0x9050@136:InternalSerialNumber",
                                             "0x9050@415:ShutterCount3"])
        XCTAssertEqual(fields("ILCE-1"), ["0x9050@58:ShutterCount", "0x9050@80:ShutterCount2", "0x9050@138:InternalSerialNumber"])
        XCTAssertEqual(fields("SLT-A77V"), ["0x2010@0:SequenceImageNumber", "0x2010@4:SequenceFileNumber", "0x2010@438:SonyDateTime",
                                            "0x9050@50:ShutterCount", "0x9050@240:InternalSerialNumber", "0x9050@445:ShutterCount3"])
        XCTAssertEqual(fields("DSC-RX100M3"), [], "no 0x2010 table with dates, and 0x9050 is not read for DSC models")
        XCTAssertEqual(SonyMakerNote.fields(model: "ILCE-7RM3", lengths: [0x9050: 64]).map(\.name), ["ShutterCount"], "only what the entry holds")
    }

    /// Olympus keeps the body's and the lens's serial numbers in the Equipment sub-IFD of its maker note (exiv2's
    /// OlympusEq), which was refused as "cannot be located": those entries now leave that IFD.
    func testOlympusEquipmentSerialsLeaveTheirSubIFD() {
        let input = Fixture.path("raw/olympus.orf")
        let original = RawDecodeTests.exiftool(input)
        let equipment = ["Olympus:SerialNumber", "Olympus:InternalSerialNumber", "Olympus:LensSerialNumber", "Olympus:LensModel"]
        for key in equipment {
            XCTAssertNotNil(original[key], "the fixture lacks \(key)")
        }
        let (report, output) = cleanProvingPixels("raw/olympus.orf")
        XCTAssertEqual(RawDecodeTests.identifyingLeft(output), [])
        let tags = RawDecodeTests.exiftool(output)
        for gone in equipment + ["IFD0:Artist", "XMP-dc:Creator", "IPTC:By-line"] {
            XCTAssertNil(tags[gone], "\(gone) is still there")
        }
        XCTAssertNotNil(tags["Olympus:CameraType2"], "the rest of the Equipment IFD stays")
        for key in ["makernote:OlympusEq.SerialNumber", "makernote:OlympusEq.LensSerialNumber", "makernote:OlympusFe1.BodyFirmwareVersion"] {
            XCTAssertEqual(report.findings.first { $0.item.key == key }?.disposition, .remove, key)
        }
    }

    /// Canon's TimeInfo (0x0035; exiv2's CanonTi: time zone, its city, daylight saving) is an array of 32-bit values:
    /// the zone and the city are blanked in place. A CR2 with it (every Canon body since 2012) was refused as
    /// "cannot be located".
    func testCanonTimeInfoIsBlankedInPlace() {
        let input = Fixture.path("raw/timeinfo.cr2"), output = dir.file("timeinfo.cr2")
        let original = RawDecodeTests.exiftool(input)
        XCTAssertEqual(original["Canon:TimeZone"] as? String, "+01:00")
        XCTAssertNotEqual(original["Canon:TimeZoneCity"] as? String, "n/a")
        let report = Run.clean(input, to: output)
        XCTAssertEqual(report.status, .cleaned, report.error?.message ?? "")
        let tags = RawDecodeTests.exiftool(output)
        XCTAssertEqual(tags["Canon:TimeZone"] as? String, "+00:00")
        XCTAssertEqual(tags["Canon:TimeZoneCity"] as? String, "n/a")
        XCTAssertEqual(RawDecodeTests.identifyingLeft(output), [])
        XCTAssertEqual(Run.clean(output, to: dir.file("timeinfo-again.cr2")).status, .clean)
    }

    /// Pentax's maker note keeps the capture time apart from its date (exiv2's Pentax.Time), home and destination
    /// cities, and an artist, copyright and firmware exiv2 does not read: all go with the serial and shutter count.
    func testPentaxMakerNoteTimeCitiesAndOwnerGo() {
        let input = Fixture.path("raw/pentax.pef")
        let original = RawDecodeTests.exiftool(input)
        let note = ["Pentax:Date", "Pentax:Time", "Pentax:HometownCity", "Pentax:DestinationCity", "Pentax:ShutterCount",
                    "Pentax:SerialNumber", "Pentax:Artist", "Pentax:Copyright", "Pentax:FirmwareVersion"]
        for key in note {
            XCTAssertNotNil(original[key], "the fixture lacks \(key)")
        }
        let (_, output) = cleanProvingPixels("raw/pentax.pef")
        XCTAssertEqual(RawDecodeTests.identifyingLeft(output), [])
        let tags = RawDecodeTests.exiftool(output)
        for gone in note + ["IFD0:Artist", "ExifIFD:SerialNumber"] {
            XCTAssertNil(tags[gone], "\(gone) is still there")
        }
        XCTAssertNotNil(tags["Pentax:PentaxModelID"])
    }
}
