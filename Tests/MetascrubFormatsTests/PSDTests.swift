// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubCore
import XCTest

/// Photoshop documents (issue 18): metadata resources removed, ICC profile, layers, masks, layer names and
/// the composite kept, judged by ExifTool and ImageMagick.
final class PSDTests: XCTestCase {
    let dir = TempDir()
    /// What ExifTool reports about the document itself (geometry, layers, resolution), not metadata.
    static let documentTags: Set<String> = [
        "NumChannels", "BitDepth", "ColorMode", "DisplayedUnitsX", "DisplayedUnitsY", "LayerCount", "LayerRectangles",
        "LayerBlendModes", "LayerOpacities", "LayerVisible", "LayerNames", "GlobalAngle", "GlobalAltitude",
        "ImageHeight", "ImageWidth", "XResolution", "YResolution", "Compression",
    ]

    func testStrictCleanKeepsLayersCompositeAndICC() {
        for name in ["layers.psd", "large.psb"] {
            let (report, output) = ContainerChecks.assertStrictClean("psd/\(name)", in: dir, allowedResidual: Self.documentTags.reduce(into: []) {
                $0.insert("Photoshop:\($1)")
            })
            XCTAssertEqual(report.method, .remux, name)
            XCTAssertEqual(report.verification?.contentResult, .passed, name)
            let input = Fixture.path("psd/\(name)")
            // ImageMagick: [0] is the flattened composite, then one image per layer.
            let frames = String(decoding: Tool.run(["identify", input]).stdout, as: UTF8.self).split(separator: "\n").count
            XCTAssertEqual(frames, 3, name)
            for index in 0..<frames {
                let before = Oracle.pixels("\(input)[\(index)]", autoOrient: false)
                XCTAssertNotNil(before, "\(name)[\(index)]: ImageMagick cannot decode it")
                XCTAssertEqual(before, Oracle.pixels("\(output)[\(index)]", autoOrient: false), "\(name)[\(index)] changed")
            }
            let tags = Oracle.exiftool(output)
            XCTAssertEqual(tags["Photoshop:LayerNames"] as? [String] ?? [], ["L1", "Kept layer name"], name)
            XCTAssertEqual(Self.layersAndImage(input), Self.layersAndImage(output), "\(name): layer section or image data changed")
        }
        XCTAssertNotNil(Oracle.exiftool(dir.file("layers.psd"))["ICC_Profile:ProfileDescription"], "the ICC profile was not kept")
    }

    func testTrailerAfterTheImageDataIsRemoved() {
        let findings = Run.scan(Fixture.path("psd/layers.psd")).findings
        XCTAssertTrue(findings.contains { $0.item.key == "psd:trailer" })
        let output = ContainerChecks.assertStrictClean("psd/layers.psd", in: dir, allowedResidual: Self.documentTags.reduce(into: []) {
            $0.insert("Photoshop:\($1)")
        }).output
        XCTAssertFalse(Oracle.contains(output, "CANARY-PSD-TRAILER"))
        XCTAssertNil(Oracle.exiftool(output)["PhotoMechanic:PMVersion"])
    }

    func testPartialPolicyRebuildsIptcXmpAndExif() {
        let output = dir.file("partial.psd")
        let report = Run.clean(Fixture.path("psd/layers.psd"), to: output, policy: ContainerChecks.keepAllButLocation)
        XCTAssertEqual(report.status, .cleaned, "\(report.error.map { "\($0)" } ?? "")")
        let tags = Oracle.exiftool(output)
        XCTAssertEqual(tags["IPTC:By-line"] as? String, "CANARY-IPTC-BYLINE")
        XCTAssertNil(tags["IPTC:City"])
        XCTAssertEqual(tags["XMP-dc:Creator"] as? String, "CANARY-XMP-CREATOR")
        XCTAssertNil(tags["XMP-photoshop:City"])
        XCTAssertEqual(tags["IFD0:Artist"] as? String, "CANARY-ARTIST-Alice")
        XCTAssertNil(tags["GPS:GPSLatitude"])
        XCTAssertNotNil(tags["Photoshop:URL"])
        // The stored digest would no longer match the rebuilt IPTC block, so it goes.
        XCTAssertNil(tags["Photoshop:IPTCDigest"])
        XCTAssertEqual(Oracle.pixels(Fixture.path("psd/layers.psd") + "[2]", autoOrient: false), Oracle.pixels(output + "[2]", autoOrient: false))
    }

    func testCleanIsAFixedPoint() throws {
        let first = ContainerChecks.assertStrictClean("psd/layers.psd", in: dir, allowedResidual: Self.documentTags.reduce(into: []) {
            $0.insert("Photoshop:\($1)")
        }).output
        XCTAssertEqual(Run.scan(first).status, .clean)
        let second = dir.file("second.psd")
        let report = Run.clean(first, to: second)
        XCTAssertEqual(report.status, .clean)
        XCTAssertEqual(FileManager.default.contents(atPath: first), FileManager.default.contents(atPath: second))
    }

    func testDamagedDocumentsAreRefused() throws {
        let bytes = [UInt8](FileManager.default.contents(atPath: Fixture.path("psd/layers.psd"))!)
        // Cut inside the composite image data, and inside the image resources section.
        for (name, cut) in [("cut-image.psd", bytes.count - 200), ("cut-resources.psd", 300)] {
            let path = dir.file(name)
            FileManager.default.createFile(atPath: path, contents: Data(bytes[0..<cut]))
            let report = Run.clean(path, to: dir.file("out-" + name))
            XCTAssertEqual(report.error?.code, "truncated", name)
            XCTAssertFalse(FileManager.default.fileExists(atPath: dir.file("out-" + name)), name)
        }
        ContainerChecks.assertRobust("psd/layers.psd", in: dir)
        ContainerChecks.assertRobust("psd/large.psb", in: dir)
    }

    /// The bytes from the layer-and-mask section to the end of the composite image data, found with a parse of
    /// the section lengths written here (not the handler's).
    /// A smart object: its embedded JPEG (a complete file with its own EXIF and GPS, per ExifTool on the extracted
    /// bytes) and the layer's `shmd` metadata are `embedded` findings with their layer path, kept with a reason
    /// under strict (a note says so); the embedded JPEG's APP1 is blanked in place (ExifTool finds no EXIF or GPS
    /// in it, ImageMagick the same pixels); the URL resource goes; the rest of the layer section and the
    /// composite are unchanged.
    func testSmartObjectFilesAndLayerMetadataAreReportedAndKeptWithAReason() throws {
        let input = Fixture.path("psd/smart-object.psd")
        let bytes = [UInt8](FileManager.default.contents(atPath: input)!)
        // The embedded JPEG, found by its markers, carries GPS and an artist of its own.
        guard let soi = (0..<bytes.count - 3).first(where: { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xD8 && bytes[$0 + 2] == 0xFF }),
              let eoi = (soi..<bytes.count - 1).last(where: { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xD9 }) else {
            return XCTFail("no embedded JPEG in the fixture")
        }
        let placed = dir.file("placed.jpg")
        FileManager.default.createFile(atPath: placed, contents: Data(bytes[soi...eoi + 1]))
        let inner = Oracle.exiftool(placed)
        XCTAssertEqual(inner["IFD0:Artist"] as? String, "CANARY-PLACED-ARTIST")
        XCTAssertNotNil(inner["GPS:GPSLatitude"])

        let scan = Run.scan(input)
        let embedded = scan.findings.filter { $0.item.category == .embedded && $0.item.parent == nil }
        XCTAssertEqual(Set(embedded.map(\.item.key)), ["psd:linkedFile", "psd:layerMetadata"])
        XCTAssertEqual(scan.findings.first { $0.item.key == "psd:linkedFile:APP1" }?.disposition, .remove)
        XCTAssertEqual(embedded.first { $0.item.key == "psd:layerMetadata" }?.item.location, "layer and mask/layer 1/shmd")
        XCTAssertEqual(embedded.first { $0.item.key == "psd:linkedFile" }?.item.location, "layer and mask/document/lnk2/#0")
        XCTAssertTrue(embedded.allSatisfy { $0.disposition == .keep && $0.reason != nil }, "\(embedded)")
        let linked = try XCTUnwrap(embedded.first { $0.item.key == "psd:linkedFile" })
        XCTAssertTrue(linked.item.offset! <= Int64(soi) && Int64(eoi) < linked.item.offset! + linked.item.length!, "the finding does not cover the embedded file")

        let output = dir.file("smart-object.psd")
        let report = Run.clean(input, to: output)
        XCTAssertEqual(report.status, .cleaned, report.error?.message ?? "")
        XCTAssertEqual(report.verification?.contentResult, .passed)
        XCTAssertEqual(report.notes.filter { $0.code == "kept-instead" && $0.message.hasPrefix("psd:") }.count, 2, "\(report.notes)")
        XCTAssertNil(Oracle.exiftool(output)["Photoshop:URL"])
        let after = [UInt8](FileManager.default.contents(atPath: output)!)
        let outSOI = after.count - (bytes.count - soi), outEOI = after.count - (bytes.count - eoi)
        let cleanedPlaced = dir.file("placed-after.jpg")
        FileManager.default.createFile(atPath: cleanedPlaced, contents: Data(after[outSOI...outEOI + 1]))
        let cleanedInner = Oracle.exiftool(cleanedPlaced)
        XCTAssertNil(cleanedInner["IFD0:Artist"])
        XCTAssertNil(cleanedInner["GPS:GPSLatitude"])
        XCTAssertNotNil(Oracle.pixels(placed, autoOrient: false))
        XCTAssertEqual(Oracle.pixels(placed, autoOrient: false), Oracle.pixels(cleanedPlaced, autoOrient: false), "the embedded JPEG's pixels changed")
        XCTAssertFalse(Oracle.contains(output, "CANARY-PLACED-ARTIST"))
        let (a, b) = (Self.layersAndImage(input), Self.layersAndImage(output))
        XCTAssertEqual(a.count, b.count, "the layer section changed length")
        XCTAssertEqual(zip(a, b).filter { $0 != $1 }.count <= 336, true, "more than the embedded JPEG's APP1 changed")
        XCTAssertEqual(Oracle.pixels("\(input)[0]", autoOrient: false), Oracle.pixels("\(output)[0]", autoOrient: false))
        XCTAssertEqual(Run.clean(output, to: dir.file("second.psd")).status, .clean, "clean is a fixed point")
    }

    static func layersAndImage(_ path: String) -> [UInt8] {
        let b = [UInt8](FileManager.default.contents(atPath: path)!)
        func u32(_ o: Int) -> Int { Int(b[o]) << 24 | Int(b[o + 1]) << 16 | Int(b[o + 2]) << 8 | Int(b[o + 3]) }
        let colorMode = 26
        let resources = colorMode + 4 + u32(colorMode)
        let layers = resources + 4 + u32(resources)
        // The IPTC trailer of layers.psd is 32 bytes (see scripts/fixtures/parts/40-psd.sh); the PSB has none.
        let end = path.hasSuffix(".psd") && b.suffix(32).starts(with: [0x1C, 0x02, 0xDD]) ? b.count - 32 : b.count
        return Array(b[layers..<end])
    }
}
