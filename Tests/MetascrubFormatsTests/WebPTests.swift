// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubCore
import XCTest

final class WebPTests: XCTestCase {
    let dir = TempDir()

    /// (FourCC, payload) of every chunk, and the RIFF size field.
    static func chunks(_ path: String) -> (riffSize: Int, chunks: [(String, [UInt8])]) {
        let b = [UInt8](FileManager.default.contents(atPath: path) ?? Data())
        guard b.count >= 12 else { return (0, []) }
        func u32(_ o: Int) -> Int { Int(b[o]) | Int(b[o + 1]) << 8 | Int(b[o + 2]) << 16 | Int(b[o + 3]) << 24 }
        var out: [(String, [UInt8])] = []
        var at = 12
        while at + 8 <= min(b.count, 8 + u32(4)) {
            let n = u32(at + 4)
            out.append((String(decoding: b[at..<at + 4], as: UTF8.self), Array(b[at + 8..<min(b.count, at + 8 + n)])))
            at += 8 + n + (n & 1)
        }
        return (u32(4), out)
    }

    func testStrictCleanRemovesExifXmpAndFixesVP8X() {
        for name in ["exif-xmp.webp", "animated.webp", "iccp.webp", "unknown-trailer.webp"] {
            let output = ContainerChecks.assertStrictClean("webp/\(name)", in: dir).output
            let (riffSize, chunks) = Self.chunks(output)
            let size = (try? FileManager.default.attributesOfItem(atPath: output)[.size] as? Int) ?? 0
            XCTAssertEqual(riffSize + 8, size, "\(name): RIFF size does not match the file")
            XCTAssertFalse(chunks.contains { ["EXIF", "XMP ", "CANR"].contains($0.0) }, name)
            if let vp8x = chunks.first(where: { $0.0 == "VP8X" }) {
                XCTAssertEqual(vp8x.1[0] & 0x0C, 0, "\(name): VP8X still flags EXIF/XMP")
                XCTAssertEqual(vp8x.1[0] & 0x20 != 0, chunks.contains { $0.0 == "ICCP" }, "\(name): ICC flag")
            }
        }
    }

    func testImageChunksAreCopiedByteForByte() {
        let output = ContainerChecks.assertStrictClean("webp/animated.webp", in: dir).output
        let image: Set<String> = ["ANIM", "ANMF", "VP8 ", "VP8L", "ALPH"]
        let before = Self.chunks(Fixture.path("webp/animated.webp")).chunks.filter { image.contains($0.0) }
        let after = Self.chunks(output).chunks.filter { image.contains($0.0) }
        XCTAssertEqual(before.map(\.0), after.map(\.0))
        XCTAssertEqual(before.map(\.1), after.map(\.1))
        XCTAssertEqual(before.filter { $0.0 == "ANMF" }.count, 2)
    }

    func testIccProfileIsKept() {
        let output = ContainerChecks.assertStrictClean("webp/iccp.webp", in: dir).output
        XCTAssertTrue(Self.chunks(output).chunks.contains { $0.0 == "ICCP" })
        XCTAssertEqual((Self.chunks(output).chunks.first { $0.0 == "VP8X" }?.1[0] ?? 0) & 0x20, 0x20)
    }

    func testLosslessOrientationIsKeptAsAMinimalTag() {
        let (report, output) = ContainerChecks.assertStrictClean("webp/lossless-orient6.webp", in: dir, allowedResidual: ["IFD0:Orientation"])
        XCTAssertEqual(report.findings.first { $0.item.key == "exif:Orientation" }?.outcome, .keptAsFallback)
        XCTAssertTrue(report.notes.contains { $0.code == "orientation-fallback" })
        let tags = Oracle.exiftool(output)
        XCTAssertEqual(tags["IFD0:Orientation"] as? Int, 6)
        XCTAssertNil(tags["IFD0:Make"])
        XCTAssertNil(tags["GPS:GPSLatitude"])
        XCTAssertEqual((Self.chunks(output).chunks.first { $0.0 == "VP8X" }?.1[0] ?? 0) & 0x08, 0x08)
    }

    func testPartialPolicyRebuildsExifAndXmp() {
        let output = dir.file("partial.webp")
        let report = Run.clean(Fixture.path("webp/exif-xmp.webp"), to: output, policy: ContainerChecks.keepAllButLocation)
        XCTAssertEqual(report.status, .cleaned, "\(report.error.map { "\($0)" } ?? "")")
        let tags = Oracle.exiftool(output)
        XCTAssertEqual(tags["IFD0:Make"] as? String, "CanaryMake")
        XCTAssertEqual(tags["XMP-dc:Creator"] as? String, "CANARY-XMP-CREATOR")
        XCTAssertNil(tags["GPS:GPSLatitude"])
        XCTAssertNil(tags["XMP-photoshop:City"])
        let (riffSize, chunks) = Self.chunks(output)
        XCTAssertEqual((chunks.first { $0.0 == "VP8X" }?.1[0] ?? 0) & 0x0C, 0x0C)
        XCTAssertEqual(riffSize + 8, FileManager.default.contents(atPath: output)?.count)
    }

    func testTrailerAndUnknownChunksAreItems() {
        let keys = Run.scan(Fixture.path("webp/unknown-trailer.webp")).findings.map(\.item.key)
        XCTAssertEqual(keys, ["webp:chunk:CANR", "webp:trailer"])
    }

    func testBrokenFilesAreRefused() {
        ContainerChecks.assertRefused("webp/bad/truncated.webp", in: dir, code: "truncated")
    }

    func testTruncatedAndCorruptedInputNeverCrashes() {
        for name in ["exif-xmp.webp", "animated.webp", "lossless-orient6.webp", "unknown-trailer.webp"] {
            ContainerChecks.assertRobust("webp/\(name)", in: dir)
        }
    }
}
