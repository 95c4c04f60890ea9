// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubCore
@testable import MetascrubFormats
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

    func testCR3IsCleanedInPlace() throws {
        // The skeleton has no sensor data, so LibRaw (and therefore `clean`) refuses it: the scanner and the
        // in-place patcher are driven directly and their output judged by ExifTool.
        let input = Fixture.path("raw/skeleton.cr3")
        XCTAssertEqual(Run.clean(input, to: dir.file("refused.cr3")).error?.code, "unsupported")
        let source = try FileByteSource(path: input)
        let scan = try CR3Scanner.scan(source, options: ScanOptions())
        let keys = Set(scan.items.map(\.key))
        for key in ["exif:Artist", "exif:DateTimeOriginal", "makernote:Canon.SerialNumber", "makernote:Canon.InternalSerialNumber",
                    "exif:GPSLatitude", "quicktime:CreateDate", "ctmd:TimeStamp", "xmp:dc:creator"] {
            XCTAssertTrue(keys.contains(key), "\(key) not found")
        }
        let layout = scan.layout
        let policy = Run.policy("strict")
        var notes: [Note] = []
        let patches = try RawTIFFPatcher.patches(layout, source: source, plan: CleanPlan(findings: policy.evaluate(scan.items), policy: policy),
                                                 notes: &notes)
        var bytes = [UInt8](FileManager.default.contents(atPath: input)!)
        for patch in patches.patches { bytes.replaceSubrange(Int(patch.offset)..<Int(patch.offset) + patch.bytes.count, with: patch.bytes) }
        let output = dir.file("skeleton.cr3")
        FileManager.default.createFile(atPath: output, contents: Data(bytes))
        for canary in ContainerChecks.canaries("raw/skeleton.cr3") + ["CANARY-XMP-CREATOR", "CANARY-CITY"] {
            XCTAssertFalse(Oracle.contains(output, canary), "canary \(canary) left in the output")
        }
        let tags = Oracle.exiftool(output)
        for gone in ["IFD0:Artist", "IFD0:Copyright", "ExifIFD:DateTimeOriginal", "ExifIFD:SerialNumber", "Canon:SerialNumber",
                     "Canon:OwnerName", "Canon:InternalSerialNumber", "GPS:GPSLatitude", "XMP-dc:Creator"] {
            XCTAssertNil(tags[gone], "\(gone) is still there")
        }
        XCTAssertEqual(tags["IFD0:Make"] as? String, "Canon")
        XCTAssertEqual(tags["Canon:CanonImageType"] as? String, "Canon EOS FIXTURE")
        XCTAssertEqual(tags["QuickTime:CreateDate"] as? String, "0000:00:00 00:00:00")
        // The CTMD time record (its 10 data bytes at the very end of the file) is zeroed; the record header stays.
        XCTAssertEqual(Array(bytes.suffix(10)), [UInt8](repeating: 0, count: 10))
        XCTAssertEqual(Array(bytes.suffix(22).prefix(6)), [22, 0, 0, 0, 1, 0])
        // Scanning the output finds nothing more to do.
        XCTAssertEqual(try CR3Scanner.scan(MemoryByteSource(bytes), options: ScanOptions()).items.filter { policy.decide($0).0 != .keep }.map(\.key), [])
    }

    func testRAFIsCleanedInPlace() throws {
        // LibRaw cannot unpack the skeleton, so `clean` refuses it; the scanner and patcher are driven directly.
        let input = Fixture.path("raw/skeleton.raf")
        XCTAssertEqual(Run.clean(input, to: dir.file("refused.raf")).error?.code, "unsupported")
        let source = try FileByteSource(path: input)
        let scan = try RAFScanner.scan(source, options: ScanOptions())
        let layout = scan.layout
        let policy = Run.policy("strict")
        var notes: [Note] = []
        let patches = try RawTIFFPatcher.patches(layout, source: source, plan: CleanPlan(findings: policy.evaluate(scan.items), policy: policy),
                                                 notes: &notes)
        var bytes = [UInt8](FileManager.default.contents(atPath: input)!)
        for patch in patches.patches { bytes.replaceSubrange(Int(patch.offset)..<Int(patch.offset) + patch.bytes.count, with: patch.bytes) }
        let output = dir.file("skeleton.raf")
        FileManager.default.createFile(atPath: output, contents: Data(bytes))
        for canary in ContainerChecks.canaries("raw/skeleton.raf") + ["CANARY-DESCRIPTION", "CANARY-SOFTWARE-1.0"] {
            XCTAssertFalse(Oracle.contains(output, canary), "canary \(canary) left in the output")
        }
        let tags = Oracle.exiftool(output)
        for gone in ["IFD0:Artist", "IFD0:Copyright", "ExifIFD:DateTimeOriginal", "ExifIFD:SerialNumber", "GPS:GPSLatitude"] {
            XCTAssertNil(tags[gone], "\(gone) is still there")
        }
        XCTAssertEqual(tags["IFD0:Make"] as? String, "FUJIFILM")
        // The embedded JPEG still shows the same picture; the CFA header and data are untouched.
        let before = dir.file("raf-before.jpg"), after = dir.file("raf-after.jpg")
        FileManager.default.createFile(atPath: before, contents: Tool.run(["exiftool", "-b", "-PreviewImage", input]).stdout)
        FileManager.default.createFile(atPath: after, contents: Tool.run(["exiftool", "-b", "-PreviewImage", output]).stdout)
        XCTAssertNotNil(Oracle.pixels(before, autoOrient: false))
        XCTAssertEqual(Oracle.pixels(before, autoOrient: false), Oracle.pixels(after, autoOrient: false))
        let original = [UInt8](FileManager.default.contents(atPath: input)!)
        XCTAssertEqual(Array(bytes.suffix(64 + 12)), Array(original.suffix(64 + 12)))
        XCTAssertEqual(try RAFScanner.scan(MemoryByteSource(bytes), options: ScanOptions()).items.filter { policy.decide($0).0 != .keep }.map(\.key), [])
    }

    func testDamagedRawsNeverCrash() {
        ContainerChecks.assertRobust("raw/canon.dng", in: dir)
        // LibRaw refuses the CR3 skeleton before its scanner runs, so the scanner itself is given cut and
        // bit-flipped copies: it may throw, never trap.
        let bytes = [UInt8](FileManager.default.contents(atPath: Fixture.path("raw/skeleton.cr3"))!)
        var state: UInt64 = 0x5EED
        for k in 0..<200 {
            var variant = Array(bytes[..<(bytes.count * (k % 20 + 1) / 20)])
            state = state &* 6364136223846793005 &+ 1442695040888963407
            if k >= 20 { variant[Int(state >> 33) % variant.count] ^= UInt8(1 << (k % 8)) }
            _ = try? CR3Scanner.scan(MemoryByteSource(variant), options: ScanOptions())
        }
        // The same for the TIFF raw scanner and the patcher (the engine only reaches them for raws LibRaw reads).
        let dngBytes = [UInt8](FileManager.default.contents(atPath: dng)!)
        let strict = Run.policy("strict")
        for k in 0..<300 {
            var variant = Array(dngBytes[..<(dngBytes.count * (k % 20 + 1) / 20)])
            state = state &* 6364136223846793005 &+ 1442695040888963407
            if k >= 20 { for j in 0..<(1 + k % 4) { variant[Int((state >> 33) &+ UInt64(j * 7919)) % variant.count] ^= UInt8(1 << ((k + j) % 8)) } }
            let source = MemoryByteSource(variant)
            guard let scan = try? RawTIFFScanner.scan(source, options: ScanOptions()) else { continue }
            let layout = scan.layout
            var notes: [Note] = []
            _ = try? RawTIFFPatcher.patches(layout, source: source, plan: CleanPlan(findings: strict.evaluate(scan.items), policy: strict), notes: &notes)
        }
        let raf = [UInt8](FileManager.default.contents(atPath: Fixture.path("raw/skeleton.raf"))!)
        for k in 0..<200 {
            var variant = Array(raf[..<(raf.count * (k % 20 + 1) / 20)])
            state = state &* 6364136223846793005 &+ 1442695040888963407
            if k >= 20 { variant[Int(state >> 33) % variant.count] ^= UInt8(1 << (k % 8)) }
            _ = try? RAFScanner.scan(MemoryByteSource(variant), options: ScanOptions())
        }
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
