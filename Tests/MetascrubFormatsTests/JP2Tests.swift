// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubCore
@testable import MetascrubFormats
import XCTest

/// JPEG 2000: metadata boxes and codestream comments go, the codestream stays; judged by ExifTool, OpenJPEG's
/// `opj_decompress` (decoded samples) and a byte search for every planted value, in ASCII and UTF-16.
final class JP2Tests: XCTestCase {
    static let geo = "jp2/geo-gps.jp2", bare = "jp2/comment.j2k"
    static let all = ["CANARY-J2K-COMMENT", "CANARY-J2K-USER", "CANARY-J2K-TILE-COMMENT", "CANARY-JP2-XMP-CREATOR",
                      "CANARY-JP2-IPTC-BYLINE", "CANARY-JP2-MAKE", "CANARY-JP2-ARTIST", "CANARY-GEO-CITATION", "CANARY-GML-GRID",
                      "CANARY-JP2-USER", "48.8583"]
    static let places = ["CANARY-GEO-CITATION", "CANARY-GML-GRID", "48.8583"]

    override func setUpWithError() throws {
        try Tool.require("exiftool", "opj_decompress")
    }

    func testEveryBoxAndCommentIsAnItem() {
        let scan = Run.scan(Fixture.path(Self.geo))
        XCTAssertEqual(scan.format, "jp2")
        let keys = Set(scan.findings.map(\.item.key))
        for key in ["j2k:comment", "jp2:geojp2", "jp2:gmljp2", "jp2:box:prvt", "xmp:dc:creator", "exif:GPSLatitude", "exif:Artist",
                    "exif:Make", "iptc:By-line"] {
            XCTAssertTrue(keys.contains(key), "missing \(key) in \(keys.sorted())")
        }
        let comments = scan.findings.filter { $0.item.key == "j2k:comment" }.map(\.item.location)
        XCTAssertEqual(comments.count, 2, "main-header and tile-part comments: \(comments)")
        XCTAssertTrue(comments.contains { $0.contains("tile-part") }, "\(comments)")
        let bare = Run.scan(Fixture.path(Self.bare))
        XCTAssertEqual(bare.format, "jp2")
        XCTAssertEqual(bare.findings.filter { $0.item.key == "j2k:comment" }.count, 2)
    }

    func testEveryPolicyLeavesNoPlantedValueAndTheSameSamples() throws {
        let tmp = TempDir()
        let expectations: [(String, [String], [String])] = [
            ("strict", Self.all, []),
            ("share", Self.all.filter { !["CANARY-JP2-XMP-CREATOR", "CANARY-JP2-IPTC-BYLINE", "CANARY-JP2-ARTIST"].contains($0) },
             ["CANARY-JP2-XMP-CREATOR", "CANARY-JP2-IPTC-BYLINE", "CANARY-JP2-ARTIST"]),
            ("location", Self.places, ["CANARY-JP2-XMP-CREATOR", "CANARY-J2K-COMMENT"]),
        ]
        for (policy, gone, kept) in expectations {
            for fixture in [Self.geo, Self.bare] {
                let input = Fixture.path(fixture)
                let output = tmp.file("\(policy)-\((fixture as NSString).lastPathComponent)")
                let report = Run.clean(input, to: output, policy: policy)
                // The bare codestream's comments state no position: `location` has nothing to remove there.
                let nothing = policy == "location" && fixture == Self.bare
                XCTAssertEqual(report.status, nothing ? .clean : .cleaned, "\(policy) \(fixture): \(report.error?.message ?? "")")
                if !nothing { XCTAssertEqual(report.verification?.contentResult, .passed, "\(policy) \(fixture)") }
                for canary in gone {
                    XCTAssertFalse(Residue.contains(output, canary), "\(policy) \(fixture): \(canary) left")
                }
                if nothing { continue }
                XCTAssertEqual(try decoded(output, tmp), try decoded(input, tmp), "\(policy) \(fixture): decoded samples differ")
                // Fixed point: the output scanned under the same policy has nothing left to remove, and cleans to itself.
                XCTAssertEqual(Run.scan(output, policy: policy).status, .clean, "\(policy) \(fixture): scan of the output")
                let again = tmp.file("again-\(policy)-\((fixture as NSString).lastPathComponent)")
                XCTAssertEqual(Run.clean(output, to: again, policy: policy).status, .clean)
            }
            let output = tmp.file("\(policy)-geo-gps.jp2")
            for canary in kept { XCTAssertTrue(Oracle.contains(output, canary), "\(policy): \(canary) should stay") }
            let tags = Oracle.exiftool(output)
            XCTAssertNil(tags["GPS:GPSLatitude"], policy)
            XCTAssertNil(tags["XMP-exif:GPSLatitude"], policy)
            XCTAssertFalse(tags.keys.contains { $0.hasPrefix("GeoTiff") }, "\(policy): GeoJP2 left")
        }
    }

    func testTileCommentsAreRemovedWithTheirTilePartLength() throws {
        let tmp = TempDir()
        let output = tmp.file("bare.j2k")
        XCTAssertEqual(Run.clean(Fixture.path(Self.bare), to: output).status, .cleaned)
        let source = try FileByteSource(path: output)
        let stream = try J2KCodestream.parse(source, 0..<source.size, path: "codestream")
        XCTAssertEqual(stream.comments, [])
        XCTAssertEqual(stream.tileParts.count, 4, "64x48 in 32x32 tiles")
    }

    func testBrokenFilesAreRefusedWithTheirOffset() throws {
        let data = try XCTUnwrap(FileManager.default.contents(atPath: Fixture.path(Self.geo)))
        let tmp = TempDir()
        // The first tile-part claims more bytes than its codestream box holds.
        var bytes = [UInt8](data)
        let sot = try XCTUnwrap((0..<(bytes.count - 1)).first { bytes[$0] == 0xFF && bytes[$0 + 1] == 0x90 })
        bytes[sot + 6] = 0x7F
        FileManager.default.createFile(atPath: tmp.file("bad.jp2"), contents: Data(bytes))
        let report = Run.scan(tmp.file("bad.jp2"))
        XCTAssertEqual(report.status, .error)
        XCTAssertTrue(report.error?.message.contains("tile-part length") ?? false, report.error?.message ?? "")
    }

    /// Decoded samples by OpenJPEG (the independent decoder), as PNM bytes.
    func decoded(_ path: String, _ tmp: TempDir) throws -> Data {
        let out = tmp.file(UUID().uuidString + ".ppm")
        let r = Tool.run(["opj_decompress", "-i", path, "-o", out])
        XCTAssertEqual(r.status, 0, r.stderr)
        return try XCTUnwrap(FileManager.default.contents(atPath: out))
    }
}

/// Planted values searched in a file's bytes as ASCII and as UTF-16 (both byte orders).
enum Residue {
    static func contains(_ path: String, _ needle: String) -> Bool {
        guard let data = FileManager.default.contents(atPath: path) else { return false }
        let forms = [Data(needle.utf8), needle.data(using: .utf16LittleEndian)!, needle.data(using: .utf16BigEndian)!]
        return forms.contains { data.range(of: $0) != nil }
    }
}
