// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubCore
import MetascrubFormats
import XCTest

final class PNGTests: XCTestCase {
    let dir = TempDir()

    func testStrictCleanRemovesEveryChunkKindLosslessly() {
        for name in ["palette-trns.png", "16bit.png", "apng.png", "after-iend.png", "caBX.png", "raw-profiles.png"] {
            let (report, output) = ContainerChecks.assertStrictClean("png/\(name)", in: dir)
            XCTAssertEqual(report.method, .remux, name)
            for chunk in ContainerChecks.pngChunks(output) {
                XCTAssertTrue(chunk.crcOK, "\(name): \(chunk.type) written with a bad CRC")
                XCTAssertFalse(["tEXt", "zTXt", "iTXt", "eXIf", "tIME", "caBX", "vpAg"].contains(chunk.type), "\(name): \(chunk.type) left")
            }
        }
    }

    func testImageChunksAreCopiedByteForByte() {
        let output = ContainerChecks.assertStrictClean("png/apng.png", in: dir).output
        let keep: Set<String> = ["IHDR", "acTL", "fcTL", "IDAT", "fdAT", "IEND"]
        let before = ContainerChecks.pngChunks(Fixture.path("png/apng.png")).filter { keep.contains($0.type) }
        let after = ContainerChecks.pngChunks(output)
        XCTAssertEqual(before.map(\.type), after.map(\.type))
        XCTAssertEqual(before.map(\.data), after.map(\.data))
        XCTAssertEqual(Oracle.exiftool(output)["PNG:AnimationFrames"] as? Int, 2)
    }

    func testIccProfileAndColourChunksAreKept() {
        // The profile is kept with every tag a conversion reads; its free-text name (ExifTool's PNG:ProfileName) is
        // neutralised and its text tags (identity under strict) are blanked in place.
        let (report, output) = ContainerChecks.assertStrictClean("png/iccp.png", in: dir, allowedResidual: ["PNG:ProfileName"])
        XCTAssertEqual(report.findings.first { $0.item.key == "png:iCCP:name" }?.outcome, .removed)
        let tags = Oracle.exiftool(output), original = Oracle.exiftool(Fixture.path("png/iccp.png"))
        XCTAssertEqual(tags["PNG:ProfileName"] as? String, "ICC profile")
        for key in original.keys where key.hasPrefix("ICC") {
            if ["ICC_Profile:ProfileDescription", "ICC_Profile:ProfileCopyright"].contains(key) {
                XCTAssertNotEqual("\(original[key]!)", "\(tags[key] ?? "")", key)
            } else {
                XCTAssertEqual("\(original[key]!)", "\(tags[key] ?? "")", key)
            }
        }
        let text = ContainerChecks.assertStrictClean("png/text.png", in: dir, samePixels: false).output
        XCTAssertEqual(ContainerChecks.pngChunks(text).map(\.type), ["IHDR", "sRGB", "gAMA", "pHYs", "IDAT", "IEND"])
    }

    func testTrailerAfterIENDIsRemoved() {
        let output = ContainerChecks.assertStrictClean("png/after-iend.png", in: dir).output
        let bytes = [UInt8](FileManager.default.contents(atPath: output)!)
        XCTAssertEqual(Array(bytes.suffix(12)), [0, 0, 0, 0, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82])
        XCTAssertTrue(Run.scan(Fixture.path("png/after-iend.png")).findings.contains { $0.item.key == "png:trailer" && $0.item.category == .embedded })
    }

    /// ImageMagick 6 ignores eXIf orientation, so the displayed image is computed here with -rotate/-transpose.
    func testOrientationIsBakedExactly() {
        for (name, transform) in [("text.png", ["-rotate", "90"]), ("interlaced-orient8.png", ["-rotate", "270"]), ("gray2-orient5.png", ["-transpose"])] {
            let (report, output) = ContainerChecks.assertStrictClean("png/\(name)", in: dir, samePixels: false)
            XCTAssertEqual(report.method, .losslessTransform, name)
            XCTAssertTrue(report.notes.contains { $0.code == "orientation-baked" }, name)
            XCTAssertEqual(report.findings.first { $0.item.key == "exif:Orientation" }?.outcome, .baked, name)
            let displayed = Tool.run(["convert", Fixture.path("png/\(name)")] + transform + ["-depth", "8", "rgba:-"])
            XCTAssertEqual(SHA256.hex(Array(displayed.stdout)), Oracle.pixels(output, autoOrient: false), "\(name): not the displayed image")
            XCTAssertFalse(ContainerChecks.pngChunks(output).contains { $0.type == "eXIf" }, name)
            XCTAssertEqual(Oracle.exiftool(output)["PNG:Interlace"] as? Int, 0, name)
        }
        // Non-square pixels turn with the image.
        let gray = ContainerChecks.pngChunks(dir.file("gray2-orient5.png")).first { $0.type == "pHYs" }!.data
        XCTAssertEqual(Array(gray[0..<8]), [0, 0, 0x0F, 0xA0, 0, 0, 0x07, 0xD0])
    }

    func testOrientationKeptWhenPolicySaysKeep() {
        let output = dir.file("kept.png")
        let report = Run.clean(Fixture.path("png/text.png"), to: output, policy: ContainerChecks.keepAllButLocation)
        XCTAssertEqual(report.status, .cleaned)
        XCTAssertEqual(report.method, .remux)
        let tags = Oracle.exiftool(output)
        XCTAssertEqual(tags["IFD0:Orientation"] as? Int, 6)
        XCTAssertEqual(tags["IFD0:Make"] as? String, "CanaryMake")
        XCTAssertEqual(tags["XMP-dc:Creator"] as? String, "CANARY-XMP-CREATOR")
        XCTAssertEqual(tags["PNG:Author"] as? String, "CANARY-PNG-AUTHOR")
        XCTAssertNil(tags["GPS:GPSLatitude"])
        XCTAssertNil(tags["XMP-exif:GPSLatitude"])
        XCTAssertNil(tags["XMP-photoshop:City"])
        XCTAssertTrue(ContainerChecks.pngChunks(output).allSatisfy(\.crcOK))
        XCTAssertEqual(Oracle.pixels(Fixture.path("png/text.png"), autoOrient: false), Oracle.pixels(output, autoOrient: false))
    }

    /// Every frame of an APNG turned (issue 16): ffmpeg composes the frames (offsets, blend and dispose ops) of
    /// the original turned by its own filters and of the cleaned file; the two sets must be identical.
    func testAnimatedPNGBakesEveryFrameExactly() throws {
        XCTAssertTrue(Tool.available("ffmpeg"), "ffmpeg is needed (scripts/install-deps)")
        let turns = [2: "hflip", 3: "hflip,vflip", 4: "vflip", 5: "transpose=0", 6: "transpose=1", 7: "transpose=3", 8: "transpose=2"]
        func frames(_ path: String, _ filter: String?) -> [String] {
            let r = Tool.run(["ffmpeg", "-nostdin", "-v", "error", "-i", path] + (filter.map { ["-vf", $0] } ?? [])
                             + ["-f", "framemd5", "-pix_fmt", "rgba", "-"])
            XCTAssertEqual(r.status, 0, r.stderr)
            return String(decoding: r.stdout, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }
                .map { String($0.split(separator: ",").last ?? "").trimmingCharacters(in: .whitespaces) }
        }
        for (orientation, filter) in turns.sorted(by: { $0.key < $1.key }) {
            let name = "apng-orient\(orientation).png"
            let output = dir.file(name)
            let report = Run.clean(Fixture.path("png/\(name)"), to: output)
            XCTAssertEqual(report.status, .cleaned, "\(name): \(report.error.map { "\($0)" } ?? "")")
            XCTAssertEqual(report.method, .losslessTransform, name)
            XCTAssertEqual(report.findings.first { $0.item.key == "exif:Orientation" }?.outcome, .baked, name)
            XCTAssertEqual(report.verification?.contentResult, .passed, name)
            let expected = frames(Fixture.path("png/\(name)"), filter)
            XCTAssertEqual(expected.count, 3, name)
            XCTAssertEqual(frames(output, nil), expected, "\(name): a displayed frame differs")
            XCTAssertNil(Oracle.exiftool(output)["IFD0:Orientation"], name)
            XCTAssertEqual(Oracle.exiftool(output)["PNG:AnimationFrames"] as? Int, 3, name)
            XCTAssertTrue(ContainerChecks.pngChunks(output).allSatisfy(\.crcOK), name)
            XCTAssertEqual(ContainerChecks.residualTags(output), [], name)
            // Clean is a fixed point: a second clean changes nothing.
            let again = dir.file("again-" + name)
            XCTAssertEqual(Run.clean(output, to: again).status, .clean, name)
        }
    }

    func testTextChunksAreItemisedByKeyword() {
        let keys = Set(Run.scan(Fixture.path("png/text.png")).findings.map(\.item.key))
        for key in ["png:text:Author", "png:text:Comment", "png:text:Software", "png:text:date:create", "png:text:Description",
                    "png:text:Title", "png:tIME", "png:chunk:prVt", "xmp:dc:creator", "xmp:photoshop:City", "exif:GPSLatitude",
                    "exif:Orientation", "exif:BodySerialNumber"] {
            XCTAssertTrue(keys.contains(key), key)
        }
        let raw = Run.scan(Fixture.path("png/raw-profiles.png")).findings
        let exifParent = raw.firstIndex { $0.item.key == "png:text:Raw profile type exif" }!
        XCTAssertTrue(raw.contains { $0.item.key == "exif:BodySerialNumber" && $0.item.parent == exifParent })
        XCTAssertTrue(raw.contains { $0.item.key == "iptc:By-line" })
        XCTAssertEqual(raw.first { $0.item.key == "png:text:parameters" }?.item.category, .content)
        XCTAssertEqual(Run.scan(Fixture.path("png/caBX.png")).findings.first?.item.key, "jumbf:c2pa")
    }

    func testAncillaryChunkWithBadCRCIsReportedAndDropped() {
        let report = ContainerChecks.assertStrictClean("png/raw-profiles.png", in: dir).report
        XCTAssertTrue(report.notes.contains { $0.code == "crc-mismatch" })
    }

    func testBrokenFilesAreRefused() {
        ContainerChecks.assertRefused("png/bad/bad-crc.png", in: dir, code: "malformed")
        ContainerChecks.assertRefused("png/bad/truncated.png", in: dir, code: "truncated")
    }

    func testDecompressionBombIsBounded() throws {
        ContainerChecks.assertStrictClean("png/bad/ztxt-bomb.png", in: dir)
        // Showing values inflates at most a few KB of the 64 MiB.
        let scan = try PNGFormat().scan(FileByteSource(path: Fixture.path("png/bad/ztxt-bomb.png")), options: ScanOptions(includeValues: true))
        XCTAssertLessThanOrEqual(scan.items.first?.value?.count ?? 0, 200)
        // A bomb where the content must be read (an XMP packet) is refused with a note, not inflated.
        var bytes = [UInt8](FileManager.default.contents(atPath: Fixture.path("png/bad/ztxt-bomb.png"))!)
        let z = Self.chunkData(bytes, type: "zTXt")!
        let keyword = Array("XML:com.adobe.xmp".utf8)
        let itxt = Self.chunk("iTXt", keyword + [0, 1, 0, 0, 0] + Array(z.drop { $0 != 0 }.dropFirst(2)))
        bytes.insert(contentsOf: itxt, at: bytes.count - 12)
        let input = dir.file("xmp-bomb.png")
        FileManager.default.createFile(atPath: input, contents: Data(bytes))
        let report = Run.clean(input, to: dir.file("xmp-bomb-out.png"))
        XCTAssertEqual(report.status, .cleaned)
        XCTAssertTrue(report.notes.contains { $0.code == "inflate-refused" })
    }

    func testTruncatedAndCorruptedInputNeverCrashes() {
        for name in ["text.png", "apng.png", "palette-trns.png", "interlaced-orient8.png", "raw-profiles.png", "after-iend.png"] {
            ContainerChecks.assertRobust("png/\(name)", in: dir)
        }
    }

    // MARK: helpers

    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typeBytes = Array(type.utf8)
        let crc = ContainerChecks.crc32((typeBytes + data)[...])
        func be(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }
        return be(UInt32(data.count)) + typeBytes + data + be(crc)
    }

    static func chunkData(_ bytes: [UInt8], type: String) -> [UInt8]? {
        var at = 8
        while at + 12 <= bytes.count {
            let n = Int(bytes[at]) << 24 | Int(bytes[at + 1]) << 16 | Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
            if String(decoding: bytes[at + 4..<at + 8], as: UTF8.self) == type { return Array(bytes[at + 8..<at + 8 + n]) }
            at += 12 + n
        }
        return nil
    }
}
