// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import MetascrubCore
@testable import MetascrubFormats
import XCTest

/// Positions in any script and any notation: UTF-16 text that is mostly Japanese or Russian, degrees and decimal
/// minutes, W3C Basic Geo and key names that are also words.
final class PositionDetectorTests: XCTestCase {
    func kinds(_ s: String) -> [String] { LocationShapes.find(in: Array(s.utf8)).map(\.kind.rawValue) }

    func testDegreesAndDecimalMinutes() {
        XCTAssertEqual(kinds("N 48° 51.498 E 002° 17.670"), ["ddm"])
        XCTAssertEqual(kinds("cache at N48 51.498 E002 17.670 under the bench"), ["ddm"])
        XCTAssertEqual(kinds("48 51.498N, 2 17.670E"), ["ddm"])
        XCTAssertTrue(kinds("S 33° 51.908' W 151° 12.593'").contains("ddm"))
        for harmless in ["N 12 34", "48° 51.5", "size 12 4.5 N", "N 1 2.5 then E", "Version 2 10.5 Everything"] {
            XCTAssertEqual(kinds(harmless), [], harmless)
        }
    }

    func testW3CGeoAndKeyNames() {
        XCTAssertTrue(kinds("<geo:lat>48.8583</geo:lat><geo:long>2.2945</geo:long>").contains("element"))
        XCTAssertEqual(kinds("<meta name=\"ICBM\" content=\"48.8583, 2.2945\">").first, "coordinates")
        XCTAssertTrue(kinds("{\"lng\": 2.2945}").contains("field"))
        XCTAssertTrue(kinds("long=2.29451").contains("field"))
        XCTAssertEqual(kinds("a long 12.50 m cable"), [], "a word is not a key without a key-value mark")
    }

    /// Japanese and Russian text around a position, in UTF-16 of both byte orders, with and without a byte-order
    /// mark, at an even and an odd offset: a small share of zero bytes must not hide it.
    func testUTF16InAnyScript() {
        let texts = ["撮影地は東京タワーの近く、35.6586, 139.7454 です。ご確認ください。撮影者の自宅です。",
                     "Снято у дома автора, координаты 55.7539, 37.6208, подъезд номер два, этаж пятый."]
        for text in texts {
            for encoding in [String.Encoding.utf16LittleEndian, .utf16BigEndian] {
                let encoded = [UInt8](text.data(using: encoding)!)
                let zeros = encoded.filter { $0 == 0 }.count
                XCTAssertLessThan(zeros * 3, encoded.count, "the text must be mostly non-ASCII for this test to mean anything")
                for prefix: [UInt8] in [[], [0x41], encoding == .utf16LittleEndian ? [0xFF, 0xFE] : [0xFE, 0xFF]] {
                    let payload = prefix + encoded
                    let found = ContentInspector.locations(in: payload)
                    let pair = found.first { $0.0.kind == .coordinates }
                    XCTAssertNotNil(pair, "\(encoding) prefix \(prefix.count): \(text.prefix(8))")
                    if let range = pair?.1 {
                        // The mapped range covers the digits in the payload.
                        let digits = payload[range].filter { $0 >= 0x30 && $0 <= 0x39 }
                        XCTAssertGreaterThanOrEqual(digits.count, 12)
                    }
                }
            }
        }
        // Random-looking binary with a few zeros holds no position.
        let binary = (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }
        XCTAssertTrue(ContentInspector.locations(in: binary).isEmpty)
    }

    /// A UTF-16 XPComment in Japanese and a UNICODE UserComment in Russian, as ExifTool writes them, each holding a
    /// position: both become location items inside their entry.
    func testExifUTF16CommentsAreRead() throws {
        try Tool.require("exiftool", "convert")
        let dir = TempDir()
        let path = dir.file("utf16.jpg")
        XCTAssertEqual(Tool.run(["convert", "-size", "16x16", "xc:gray", path]).status, 0)
        let run = Tool.run(["exiftool", "-q", "-overwrite_original", "-XPComment=撮影地 35.6586, 139.7454 東京",
                            "-UserComment=Дом автора 55.7539, 37.6208 Москва", "-exif:ImageDescription=N 48° 51.498 E 002° 17.670",
                            path])
        XCTAssertEqual(run.status, 0)
        let scan = try JPEGFormat().scan(FileByteSource(path: path), options: ScanOptions())
        for tag in ["exif:XPComment", "exif:UserComment", "exif:ImageDescription"] {
            guard let parent = scan.items.firstIndex(where: { $0.key == tag }) else { return XCTFail("\(tag) not listed") }
            XCTAssertTrue(scan.items.contains { $0.parent == parent && $0.category == .location }, "\(tag): no position found inside")
        }
        // Under `location` (which keeps comments and descriptions) the entries holding positions go; the output holds
        // none of the numbers in any encoding.
        let output = dir.file("utf16-location.jpg")
        let report = Run.clean(path, to: output, policy: "location")
        XCTAssertEqual(report.status, .cleaned, "\(report.error.map { "\($0)" } ?? "")")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: output))
        for needle in ["35.6586", "55.7539", "51.498"] {
            XCTAssertNil(bytes.range(of: Data(needle.utf8)), needle)
            XCTAssertNil(bytes.range(of: needle.data(using: .utf16LittleEndian)!), needle)
            XCTAssertNil(bytes.range(of: needle.data(using: .utf16BigEndian)!), needle)
        }
    }

    /// A HEIF `udes` description that states a position is read under `location`, which keeps descriptions: the
    /// property goes and the output holds no position.
    func testHEIFUserDescriptionIsRead() throws {
        let input = Fixture.path("leaks/udes-position.heic")
        let scan = Run.scan(input, policy: "location")
        let udes = scan.findings.firstIndex { $0.item.key == "heif:udes" }
        XCTAssertNotNil(udes)
        XCTAssertTrue(scan.findings.contains { $0.item.parent == udes && $0.item.category == .location })
        let dir = TempDir()
        let output = dir.file("udes.heic")
        let report = Run.clean(input, to: output, policy: "location")
        XCTAssertEqual(report.status, .cleaned, "\(report.error.map { "\($0)" } ?? "")")
        XCTAssertFalse(Oracle.contains(output, "48.8583"))
        XCTAssertEqual(Run.scan(output, policy: "location").status, .clean)
    }
}
