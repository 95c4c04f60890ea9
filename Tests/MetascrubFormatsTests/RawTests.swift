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
        // What the converter needs stays; a DNG carries its own matrices, so LibRaw decodes it the same without
        // Make and Model, and they go (issue 24).
        XCTAssertNil(tags["IFD0:Make"])
        XCTAssertNil(tags["IFD0:Model"])
        XCTAssertEqual(tags["IFD0:UniqueCameraModel"] as? String, "Fixture Camera")
        XCTAssertNotNil(tags["IFD0:ColorMatrix1"])
        // A DNG's converter reads only DNG tags: its maker note goes whole, as in a JPEG under strict.
        XCTAssertNil(tags["Canon:CanonImageType"], "the maker note of a DNG goes whole under strict")
        // UniqueCameraModel stays (DNG requires it), with the reason on its finding and a note.
        for key in ["exif:Make", "exif:Model"] {
            XCTAssertEqual(report.findings.first { $0.item.key == key }?.disposition, .remove, key)
        }
        let unique = report.findings.first { $0.item.key == "exif:UniqueCameraModel" }
        XCTAssertEqual(unique?.disposition, .keep)
        XCTAssertEqual(unique?.reason, RawTIFFScanner.uniqueCameraModelReason)
        XCTAssertTrue(report.notes.contains { $0.code == "kept-instead" && $0.message.hasPrefix("exif:UniqueCameraModel kept") }, "\(report.notes)")
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
        XCTAssertEqual(tags["Canon:CanonImageType"] as? String, "Canon EOS FIXTURE", "a policy that keeps device data keeps the maker note")
        XCTAssertEqual(try Self.dcraw(dng, in: dir, name: "p-before"), try Self.dcraw(output, in: dir, name: "p-after"))
    }

    func testRawLibRawCannotDecodeIsCleanedWithANoteOrRefused() throws {
        // An 8-bit RGB TIFF that says it is a DNG: LibRaw cannot decode it, but its metadata structure parses,
        // so it is cleaned in place with a `damaged input` note (every other byte proven identical), and
        // refused under `damaged: refuse`.
        let input = dir.file("undecodable.dng")
        try FileManager.default.copyItem(atPath: Fixture.path("tiff/bad/dng-version.dng"), toPath: input)
        XCTAssertEqual(Tool.run(["exiftool", "-q", "-overwrite_original", "-Artist=CANARY-ARTIST-Alice", input]).status, 0)
        let identify = Tool.run(["raw-identify", input])
        XCTAssertTrue((String(decoding: identify.stdout, as: UTF8.self) + identify.stderr).contains("Cannot decode"),
                      "LibRaw should not decode this")
        let output = dir.file("undecodable-out.dng")
        let report = Run.clean(input, to: output)
        XCTAssertEqual(report.status, .cleaned, report.error?.message ?? "")
        XCTAssertTrue(report.notes.contains { $0.code == "damaged-input" && $0.message.contains("LibRaw") }, "\(report.notes)")
        XCTAssertNil(Oracle.exiftool(output)["IFD0:Artist"])
        let before = [UInt8](FileManager.default.contents(atPath: input)!), after = [UInt8](FileManager.default.contents(atPath: output)!)
        XCTAssertEqual(before.count, after.count)
        var policy = Run.policy("strict")
        policy.damaged = .refuse
        let refused = dir.file("undecodable-refused.dng")
        let refusal = Run.clean(input, to: refused, policy: policy)
        XCTAssertEqual(refusal.status, .error)
        XCTAssertEqual(refusal.error?.code, "unsupported")
        XCTAssertTrue(refusal.error?.message.contains("LibRaw") ?? false, refusal.error?.message ?? "")
        XCTAssertFalse(FileManager.default.fileExists(atPath: refused))
    }

    func testCR3IsCleanedInPlace() throws {
        // The skeleton has no sensor data, so LibRaw does not recognise it: `clean` cleans it with a note (and
        // refuses it under `damaged: refuse`); the scanner and the in-place patcher are also driven directly.
        let input = Fixture.path("raw/skeleton.cr3")
        try Self.assertCleanedWithoutDecoding(input, in: dir, name: "skeleton.cr3")
        let source = try FileByteSource(path: input)
        let scan = try CR3Scanner.scan(source, options: ScanOptions())
        let keys = Set(scan.items.map(\.key))
        for key in ["exif:Artist", "exif:DateTimeOriginal", "makernote:Canon.SerialNumber", "makernote:Canon.InternalSerialNumber",
                    "exif:GPSLatitude", "quicktime:CreateDate", "ctmd:TimeStamp", "xmp:dc:creator"] {
            XCTAssertTrue(keys.contains(key), "\(key) not found")
        }
        // The CTMD track's maker-note record (type 8) is cleaned like CMT3.
        for location in ["CTMD/MakerNote/Canon.SerialNumber", "CTMD/MakerNote/CanonCs.LensType"] {
            XCTAssertTrue(scan.items.contains { $0.location == location }, "\(location) not found")
        }
        let layout = scan.layout
        let policy = Run.policy("strict")
        var notes: [Note] = []
        let findings = try RawDecodeBisection.settle(policy.evaluate(scan.items), input: source, layout: layout, policy: policy)
        let patches = try RawTIFFPatcher.patches(layout, source: source, plan: CleanPlan(findings: findings, policy: policy), notes: &notes)
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
        XCTAssertEqual(Oracle.exiftool(input)["Canon:LensType"] as? Int, 137)
        XCTAssertNotEqual(tags["Canon:LensType"] as? Int, 137, "CameraSettings.LensType was not blanked")
        XCTAssertEqual(tags["QuickTime:CreateDate"] as? String, "0000:00:00 00:00:00")
        // The CTMD time record (its 10 data bytes at the very end of the file) is zeroed; the record header stays.
        XCTAssertEqual(Array(bytes.suffix(10)), [UInt8](repeating: 0, count: 10))
        XCTAssertEqual(Array(bytes.suffix(22).prefix(6)), [22, 0, 0, 0, 1, 0])
        // Scanning the output finds nothing more to do.
        let rescan = try CR3Scanner.scan(MemoryByteSource(bytes), options: ScanOptions())
        XCTAssertEqual(rescan.items.indices.filter { rescan.layout.required[$0] == nil && !rescan.layout.decoderItems.contains($0)
            && policy.decide(rescan.items[$0]).0 != .keep }, [])
    }

    func testRAFIsCleanedInPlace() throws {
        // LibRaw cannot unpack the skeleton: `clean` cleans it with a note; the scanner and patcher are also
        // driven directly.
        let input = Fixture.path("raw/skeleton.raf")
        try Self.assertCleanedWithoutDecoding(input, in: dir, name: "skeleton.raf")
        let source = try FileByteSource(path: input)
        let scan = try RAFScanner.scan(source, options: ScanOptions())
        let layout = scan.layout
        let policy = Run.policy("strict")
        var notes: [Note] = []
        let findings = try RawDecodeBisection.settle(policy.evaluate(scan.items), input: source, layout: layout, policy: policy)
        let patches = try RawTIFFPatcher.patches(layout, source: source, plan: CleanPlan(findings: findings, policy: policy), notes: &notes)
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
        let rescan = try RAFScanner.scan(MemoryByteSource(bytes), options: ScanOptions())
        XCTAssertEqual(rescan.items.indices.filter { rescan.layout.required[$0] == nil && !rescan.layout.decoderItems.contains($0)
            && policy.decide(rescan.items[$0]).0 != .keep }, [])
    }

    func testDamagedRawsNeverCrash() {
        ContainerChecks.assertRobust("raw/canon.dng", in: dir)
        ContainerChecks.assertRobust("raw/stub.cr2", in: dir)
        // The scanners themselves are given cut and bit-flipped copies: they may throw, never trap.
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

    /// A raw without a magic of its own (NEF, ARW, PEF) reaches the raw cleaner through the TIFF row: it keeps
    /// what LibRaw needs with its reason too (the TIFF row settles raws like the raw rows): Make (LibRaw takes a
    /// TIFF without DNG tags for a Canon raw by it), not Model or UniqueCameraModel.
    /// Made from canon.dng with its DNG version tags renamed, so only its sensor-data SubIFD marks it a raw.
    func testRawThroughTheTIFFRowKeepsMakeAndModelWithAReason() throws {
        var bytes = [UInt8](FileManager.default.contents(atPath: dng)!)
        let ifd0 = Int(bytes[4]) | Int(bytes[5]) << 8 | Int(bytes[6]) << 16 | Int(bytes[7]) << 24
        let count = Int(bytes[ifd0]) | Int(bytes[ifd0 + 1]) << 8
        for i in 0..<count {
            let at = ifd0 + 2 + 12 * i, tag = Int(bytes[at]) | Int(bytes[at + 1]) << 8
            if tag == 0xC612 || tag == 0xC613 { bytes[at] = UInt8((0xC5F0 + tag - 0xC612) & 0xFF); bytes[at + 1] = 0xC5 }
        }
        let input = dir.file("undng.tif"), output = dir.file("undng-out.tif")
        FileManager.default.createFile(atPath: input, contents: Data(bytes))
        XCTAssertNil(Oracle.exiftool(input)["IFD0:DNGVersion"])
        let report = Run.clean(input, to: output)
        XCTAssertEqual(report.status, .cleaned, report.error?.message ?? "")
        XCTAssertEqual(report.findings.first { $0.item.key == "exif:Make" }?.reason, RawDecodeBisection.neededReason)
        XCTAssertEqual(report.findings.first { $0.item.key == "exif:Model" }?.disposition, .remove)
        XCTAssertEqual(try Self.dcraw(input, in: dir, name: "undng-before"), try Self.dcraw(output, in: dir, name: "undng-after"))
        let tags = Oracle.exiftool(output)
        XCTAssertEqual(tags["IFD0:Make"] as? String, "Canon")
        XCTAssertNil(tags["IFD0:Artist"])
        XCTAssertNil(tags["GPS:GPSLatitude"])
    }

    /// A CR2 whose raw data is a stub (LibRaw does not recognise it): cleaned in place with a `damaged input`
    /// note naming the raw data, judged by ExifTool; lens, owner, serial, firmware and dates go, make and model
    /// stay with their reason; the stub raw data is the same bytes; a fixed point; refused under `damaged: refuse`.
    func testStubCR2IsCleanedWithADamagedNote() throws {
        let input = Fixture.path("raw/stub.cr2")
        let identify = Tool.run(["raw-identify", input])
        XCTAssertTrue((String(decoding: identify.stdout, as: UTF8.self) + identify.stderr).contains("Cannot decode"), "LibRaw should not decode this")
        let output = try Self.assertCleanedWithoutDecoding(input, in: dir, name: "stub.cr2")
        for canary in ContainerChecks.canaries("raw/stub.cr2") {
            XCTAssertFalse(Oracle.contains(output, canary), "canary \(canary) left in the output")
        }
        let tags = Oracle.exiftool(output)
        for gone in ["IFD0:Artist", "IFD0:Copyright", "IFD0:ModifyDate", "ExifIFD:DateTimeOriginal", "ExifIFD:OwnerName", "ExifIFD:SerialNumber",
                     "ExifIFD:LensInfo", "ExifIFD:LensMake", "ExifIFD:LensModel", "ExifIFD:LensSerialNumber", "Canon:OwnerName",
                     "Canon:SerialNumber", "Canon:CanonFirmwareVersion", "Canon:LensModel", "GPS:GPSLatitude"] {
            XCTAssertNil(tags[gone], "\(gone) is still there")
        }
        XCTAssertEqual(Oracle.exiftool(input)["Canon:LensType"] as? Int, 137)
        XCTAssertNotEqual(tags["Canon:LensType"] as? Int, 137, "the maker note's LensType was not blanked")
        XCTAssertEqual(tags["IFD0:Make"] as? String, "Canon")
        XCTAssertEqual(tags["IFD0:Model"] as? String, "Canon EOS FIXTURE")
        XCTAssertEqual(tags["Canon:CanonImageType"] as? String, "Canon EOS FIXTURE", "the rest of a CR2's maker note stays")
        let before = [UInt8](FileManager.default.contents(atPath: input)!), after = [UInt8](FileManager.default.contents(atPath: output)!)
        XCTAssertEqual(Array(before.suffix(64)), Array(after.suffix(64)), "the stub raw data (the file's last 64 bytes) changed")
    }

    /// `clean` of a raw LibRaw cannot decode: cleaned with one `damaged-input` note about LibRaw, the same size,
    /// a fixed point, and refused under `damaged: refuse`. Returns the cleaned file.
    @discardableResult
    static func assertCleanedWithoutDecoding(_ input: String, in dir: TempDir, name: String) throws -> String {
        let output = dir.file("cleaned-\(name)")
        let report = Run.clean(input, to: output)
        XCTAssertEqual(report.status, .cleaned, report.error?.message ?? "")
        XCTAssertEqual(report.notes.filter { $0.code == "damaged-input" && $0.message.contains("LibRaw") && $0.message.contains("decoding") }.count, 1,
                       "\(report.notes)")
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: output)[.size] as? Int,
                       try FileManager.default.attributesOfItem(atPath: input)[.size] as? Int, "an in-place clean keeps the size")
        XCTAssertEqual(Run.clean(output, to: dir.file("second-\(name)")).status, .clean)
        var policy = Run.policy("strict")
        policy.damaged = .refuse
        let refusal = Run.clean(input, to: dir.file("refused-\(name)"), policy: policy)
        XCTAssertEqual(refusal.status, .error)
        XCTAssertEqual(refusal.error?.code, "unsupported")
        return output
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
