// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import MetascrubCore
import XCTest

/// Issue 23, item 4: a WebP EXIF chunk rebuilt with its kept entries keeps the header form the original used.
/// Some writers put "Exif\0\0" before the TIFF structure, and some viewers read the orientation only in that
/// form: dropping it would turn the picture for them.
final class WebPExifHeaderTests: XCTestCase {
    /// `webp/lossy-orient6.webp` with "Exif\0\0" put before its EXIF chunk's TIFF structure (chunk and RIFF sizes fixed).
    private func prefixed(_ dir: TempDir) throws -> String {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Fixture.path("webp/lossy-orient6.webp"))))
        var at = 12
        while at + 8 <= bytes.count, String(decoding: bytes[at..<at + 4], as: UTF8.self) != "EXIF" {
            let size = Int(bytes[at + 4]) | Int(bytes[at + 5]) << 8 | Int(bytes[at + 6]) << 16 | Int(bytes[at + 7]) << 24
            at += 8 + size + size % 2
        }
        XCTAssertLessThan(at + 8, bytes.count, "the fixture has no EXIF chunk")
        let size = Int(bytes[at + 4]) | Int(bytes[at + 5]) << 8 | Int(bytes[at + 6]) << 16 | Int(bytes[at + 7]) << 24
        func le32(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF), UInt8((v >> 16) & 0xFF), UInt8(v >> 24)] }
        bytes.replaceSubrange(at + 4..<at + 8, with: le32(size + 6))
        bytes.insert(contentsOf: Array("Exif\0\0".utf8), at: at + 8)
        bytes.replaceSubrange(4..<8, with: le32(bytes.count - 8))
        let path = dir.file("prefixed.webp")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    private func exifChunk(_ path: String) -> [UInt8]? {
        let bytes = [UInt8](FileManager.default.contents(atPath: path) ?? Data())
        var at = 12
        while at + 8 <= bytes.count {
            let size = Int(bytes[at + 4]) | Int(bytes[at + 5]) << 8 | Int(bytes[at + 6]) << 16 | Int(bytes[at + 7]) << 24
            if String(decoding: bytes[at..<at + 4], as: UTF8.self) == "EXIF" { return Array(bytes[at + 8..<min(bytes.count, at + 8 + size)]) }
            at += 8 + size + size % 2
        }
        return nil
    }

    func testRebuiltExifChunkKeepsTheExifHeaderTheOriginalHad() throws {
        try Tool.require("exiftool")
        let dir = TempDir()
        let input = try prefixed(dir)
        XCTAssertEqual(Oracle.exiftool(input)["IFD0:Orientation"] as? Int, 6, "exiftool does not read the prefixed fixture")
        let output = dir.file("out.webp")
        // location removes the GPS (so the block is rebuilt) and keeps Make and the orientation.
        let report = Run.clean(input, to: output, policy: "location")
        XCTAssertEqual(report.status, .cleaned, "\(String(describing: report.error))")
        let chunk = try XCTUnwrap(exifChunk(output))
        XCTAssertEqual(Array(chunk.prefix(6)), Array("Exif\0\0".utf8), "the Exif header was dropped")
        let tags = Oracle.exiftool(output)
        XCTAssertEqual(tags["IFD0:Orientation"] as? Int, 6)
        XCTAssertNotNil(tags["IFD0:Make"])
        XCTAssertFalse(tags.keys.contains { $0.hasPrefix("GPS:") })
        XCTAssertEqual(Run.clean(output, to: dir.file("again.webp"), policy: "location").status, .clean, "not a fixed point")
        // A chunk without the header stays without it.
        let plain = dir.file("plain.webp")
        XCTAssertEqual(Run.clean(Fixture.path("webp/lossy-orient6.webp"), to: plain, policy: "location").status, .cleaned)
        XCTAssertNotEqual(Array(try XCTUnwrap(exifChunk(plain)).prefix(4)), Array("Exif".utf8))
    }
}
