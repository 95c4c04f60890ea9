// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubCore
@testable import MetascrubFormats
import XCTest

/// JPEG XL: metadata boxes go, codestream boxes stay byte for byte; judged by ExifTool and djxl.
final class JXLTests: XCTestCase {
    static let canaries = ["CANARY-", "CanaryMake", "c2pa"]

    override func setUpWithError() throws {
        try Tool.require("exiftool")
        guard FileManager.default.fileExists(atPath: Fixture.path("jxl/exif-xmp.jxl")) else {
            XCTFail("the JPEG XL fixtures are missing (scripts/make-fixtures needs cjxl from libjxl-tools)")
            throw Tool.Missing(names: ["cjxl"])
        }
    }

    func testBareCodestreamHasNothingToRemove() {
        let tmp = TempDir()
        let scan = Run.scan(Fixture.path("jxl/bare.jxl"))
        XCTAssertEqual(scan.format, "jxl")
        XCTAssertEqual(scan.status, .clean)
        XCTAssertEqual(scan.findings, [])
        let report = Run.clean(Fixture.path("jxl/bare.jxl"), to: tmp.file("bare.jxl"))
        XCTAssertEqual(report.status, .clean)
        XCTAssertEqual(FileManager.default.contents(atPath: tmp.file("bare.jxl")), FileManager.default.contents(atPath: Fixture.path("jxl/bare.jxl")))
    }

    func testContainerMetadataIsItemised() {
        let keys = Set(Run.scan(Fixture.path("jxl/exif-xmp.jxl")).findings.map(\.item.key))
        for key in ["exif:GPSLatitude", "exif:Make", "exif:Artist", "xmp:dc:creator", "xmp:photoshop:City"] {
            XCTAssertTrue(keys.contains(key), "missing \(key)")
        }
        let extras = Dictionary(Run.scan(Fixture.path("jxl/extras.jxl")).findings.map { ($0.item.key, $0.item) }, uniquingKeysWith: { a, _ in a })
        XCTAssertEqual(extras["xmp:packet"]?.detail?.contains("Brotli"), true, "a brob box is classified by its inner type")
        XCTAssertEqual(extras["jumbf:c2pa"]?.category, .provenance)
        XCTAssertEqual(extras["jxl:trailer"]?.category, .embedded)
        let recompressed = Set(Run.scan(Fixture.path("jxl/recompressed.jxl")).findings.map(\.item.key))
        XCTAssertTrue(recompressed.contains("exif:block"), "Brotli-compressed EXIF: \(recompressed)")
        XCTAssertTrue(recompressed.contains("jxl:jpeg-reconstruction"))
    }

    func testStrictCleanKeepsTheCodestreamAndRemovesEverythingElse() throws {
        let tmp = TempDir()
        for name in ["exif-xmp.jxl", "recompressed.jxl", "extras.jxl"] {
            let input = Fixture.path("jxl/\(name)"), output = tmp.file(name)
            let report = Run.clean(input, to: output)
            XCTAssertEqual(report.status, .cleaned, "\(name): \(report.error?.message ?? "")")
            XCTAssertEqual(report.verification?.contentResult, .passed, name)
            let left = Oracle.exiftool(output).keys.filter { key in ["IFD0", "ExifIFD", "GPS", "XMP", "JUMBF", "C2PA"].contains { key.hasPrefix($0) } }
            XCTAssertEqual(left, [], "\(name): ExifTool still sees \(left.sorted())")
            for canary in Self.canaries { XCTAssertFalse(Oracle.contains(output, canary), "\(name): \(canary) left") }
            XCTAssertEqual(try codestream(output), try codestream(input), "\(name): codestream boxes changed")
            for type in ["Exif", "xml ", "brob", "jumb", "jbrd"] { XCTAssertFalse(try boxTypes(output).contains(type), "\(name): \(type) left") }
        }
        // djxl decodes the cleaned files to the same pixels as the metadata-free original.
        try Tool.require("djxl", "convert")
        XCTAssertEqual(decoded(tmp.file("exif-xmp.jxl"), tmp), decoded(Fixture.path("jxl/bare.jxl"), tmp))
        XCTAssertEqual(decoded(tmp.file("extras.jxl"), tmp), decoded(Fixture.path("jxl/bare.jxl"), tmp))
        XCTAssertEqual(decoded(tmp.file("recompressed.jxl"), tmp), decoded(Fixture.path("jxl/recompressed.jxl"), tmp))
    }

    func testSharePolicyRebuildsTheExifBox() {
        let tmp = TempDir()
        let report = Run.clean(Fixture.path("jxl/exif-xmp.jxl"), to: tmp.file("s.jxl"), policy: "share")
        XCTAssertEqual(report.status, .cleaned, report.error?.message ?? "")
        let tags = Oracle.exiftool(tmp.file("s.jxl"))
        XCTAssertEqual(tags["IFD0:Artist"] as? String, "CANARY-ARTIST-Alice")
        XCTAssertEqual(tags["XMP-dc:Creator"] as? String, "CANARY-XMP-CREATOR")
        XCTAssertNil(tags["GPS:GPSLatitude"])
        XCTAssertNil(tags["IFD0:Make"])
    }

    /// JPEG reconstruction data refers to the metadata boxes; once they change it goes too (with a note).
    func testReconstructionDataGoesWithTheMetadataItRefersTo() throws {
        let tmp = TempDir()
        var policy = Run.policy("location")
        policy.keys[KeyPattern("exif:*")] = .remove
        policy.keys[KeyPattern("jxl:jpeg-reconstruction")] = .keep
        let report = Run.clean(Fixture.path("jxl/recompressed.jxl"), to: tmp.file("r.jxl"), policy: policy)
        XCTAssertEqual(report.status, .cleaned, report.error?.message ?? "")
        XCTAssertTrue(report.notes.contains { $0.code == "jxl-reconstruction-dropped" })
        XCTAssertEqual(report.findings.first { $0.item.key == "jxl:jpeg-reconstruction" }?.outcome, .removed)
        XCTAssertFalse(try boxTypes(tmp.file("r.jxl")).contains("jbrd"))
    }

    func testTruncatedAndCorruptedInputsNeverCrash() {
        let tmp = TempDir()
        for input in ["exif-xmp.jxl", "recompressed.jxl", "extras.jxl"] {
            ContainerChecks.assertRobust("jxl/\(input)", in: tmp, seed: 0x6A78_6C21)
        }
    }

    // MARK: - Helpers

    private func boxTypes(_ path: String) throws -> [String] {
        try BoxReader(FileByteSource(path: path), format: "JPEG XL").topLevel().boxes.map(\.type.description)
    }

    /// The codestream boxes' payloads, in order.
    private func codestream(_ path: String) throws -> [[UInt8]] {
        let source = try FileByteSource(path: path)
        return try BoxReader(source, format: "JPEG XL").topLevel().boxes.filter { ["jxlc", "jxlp"].contains($0.type.description) }
            .map { try source.read(at: $0.payloadOffset, count: Int($0.payloadSize)) }
    }

    private func decoded(_ path: String, _ tmp: TempDir) -> String? {
        let png = tmp.file(UUID().uuidString + ".png")
        guard Tool.run(["djxl", path, png]).status == 0 else { return nil }
        return Oracle.pixels(png, autoOrient: false)
    }
}
