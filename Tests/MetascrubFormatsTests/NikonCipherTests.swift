// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
@testable import MetascrubFormats
import XCTest

/// Nikon's cipher against ExifTool's own (`Image::ExifTool::Nikon::Decrypt`, symmetric: deciphering zeros gives
/// the keystream), for key material of every shape the maker note holds.
final class NikonCipherTests: XCTestCase {
    func testKeystreamMatchesExifTool() throws {
        for (serial, count) in [(0, 0), (7654321, 4242), (3001234, 0xDEAD_BEEF), (255, 1), (256, 0x0101_0101)] {
            let perl = Tool.run(["perl", "-MImage::ExifTool::Nikon", "-e",
                                 "my $d = \"\\0\" x 300; print unpack('H*', Image::ExifTool::Nikon::Decrypt(\\$d, 0, undef, \(serial), \(count)))"])
            XCTAssertEqual(perl.status, 0, "ExifTool's Nikon module is needed as the oracle: \(perl.stderr)")
            let expected = String(decoding: perl.stdout, as: UTF8.self)
            let countBytes = (0..<4).map { UInt8(truncatingIfNeeded: count >> ($0 * 8)) }
            let stream = NikonCipher.keystream(serialKey: UInt8(serial & 0xFF), countKey: NikonCipher.countKey(countBytes), length: 300)
            XCTAssertEqual(stream.map { String(format: "%02x", $0) }.joined(), expected, "serial \(serial), count \(count)")
        }
    }

    func testSerialKeyAsReadersTakeIt() {
        XCTAssertEqual(NikonCipher.serialKey(Array("7654321\0\0".utf8), model: "NIKON D200"), UInt8(7654321 & 0xFF))
        XCTAssertEqual(NikonCipher.serialKey(Array("0".utf8), model: "NIKON D200"), 0)
        XCTAssertEqual(NikonCipher.serialKey(Array("No= 30012".utf8), model: "NIKON D200"), 0x60)
        XCTAssertEqual(NikonCipher.serialKey(Array("No= 30012".utf8), model: "NIKON D50"), 0x22)
    }

    func testWhichBlocksAreEnciphered() {
        func at(_ tag: UInt16, _ version: String) -> NikonCipher.Enciphering? {
            NikonCipher.enciphering(tag: tag, version: Array(version.utf8), length: 400)
        }
        XCTAssertEqual(at(0x0097, "0100"), .plain)
        XCTAssertEqual(at(0x0097, "0205"), .from(4))
        XCTAssertEqual(at(0x0097, "0204"), .from(284))
        XCTAssertEqual(at(0x0097, "0219"), .from(284))
        XCTAssertEqual(at(0x0097, "0800"), .from(4))
        XCTAssertEqual(at(0x0098, "0101"), .plain)
        XCTAssertEqual(at(0x0098, "0204"), .from(4))
        XCTAssertEqual(at(0x0098, "0999"), .unknown)
        XCTAssertEqual(at(0x0091, "0210"), .from(4))
        XCTAssertEqual(at(0x0091, "0100"), .plain)
        XCTAssertNil(at(0x00A8, "0106"))
    }
}
