// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubCore
import MetascrubFormats
import XCTest

/// `orientation: bake` with `reencode: true` on TIFF (issue 16): strips decoded and coded again by libtiff with
/// the same compression, so the displayed pixels stay exactly the same. Judged by ImageMagick (the original
/// rendered with `-auto-orient` at 16 bits against the output, sample for sample) and ExifTool (no orientation
/// tag, nothing the policy removes, the coding unchanged).
final class TIFFOrientationReencodeTests: XCTestCase {
    override func setUpWithError() throws {
        for tool in ["exiftool", "convert"] {
            XCTAssertTrue(Tool.available(tool), "\(tool) is needed (scripts/install-deps)")
        }
    }

    static let rotated = (2...8).flatMap { o in ["none", "lzw", "deflate"].map { "tiff/orient/\($0)-\(o).tif" } }
        + ["tiff/orient/gray16-deflate-6.tif", "tiff/orient/rgb16-lzw-5.tif", "tiff/orient/rgba-packbits-7.tif"]
    static let keptLayouts = ["tiff/orient/tiled-6.tif", "tiff/orient/multipage-6.tif"]
    static let canaries = ["CanaryMake", "CANARY-ARTIST-Alice", "CANARY-SERIAL-7731", "CANARY-XMP-CREATOR", "CANARY-IPTC-BYLINE"]

    /// ImageMagick's 16-bit RGBA samples of a file, oriented as a viewer shows it when `autoOrient`.
    private func samples(_ path: String, autoOrient: Bool) -> Data? {
        let r = Tool.run(["convert", path] + (autoOrient ? ["-auto-orient"] : []) + ["-depth", "16", "rgba:-"])
        return r.status == 0 && !r.stdout.isEmpty ? r.stdout : nil
    }

    func testEveryRotatedTIFFBakesToIdenticalUprightPixels() throws {
        let tmp = TempDir()
        let policy = OrientationReencodeTests.reencoding
        for fixture in Self.rotated {
            let input = Fixture.path(fixture)
            let name = (fixture as NSString).lastPathComponent
            let output = tmp.file(name)
            let report = Run.clean(input, to: output, policy: policy)
            XCTAssertEqual(report.status, .cleaned, "\(name): \(report.error?.message ?? "")")
            XCTAssertEqual(report.method, .reencode, name)
            let info = try XCTUnwrap(report.reencode, name)
            XCTAssertTrue(info.reason.hasPrefix("orientation bake"), info.reason)
            XCTAssertTrue(info.encoder.hasPrefix("libtiff"), info.encoder)
            XCTAssertNil(info.psnr, "\(name): a lossless re-encode reports identical pixels")
            XCTAssertEqual(report.findings.first { $0.item.key == "exif:Orientation" }?.outcome, .baked, name)

            // ImageMagick: the output's samples are the original's displayed samples, exactly.
            let displayed = try XCTUnwrap(samples(input, autoOrient: true), name)
            XCTAssertEqual(samples(output, autoOrient: false), displayed, "\(name): pixels differ from the auto-oriented original")

            // ExifTool: no orientation, nothing strict removes, the coding as it was.
            let before = Oracle.exiftool(input), after = Oracle.exiftool(output)
            XCTAssertNil(after["IFD0:Orientation"], "\(name): orientation tag left")
            XCTAssertEqual(Oracle.metadataTags(output).filter { !$0.hasPrefix("IFD0:") }, [], name)
            for canary in Self.canaries { XCTAssertFalse(Oracle.contains(output, canary), "\(name): \(canary) left") }
            for tag in ["IFD0:Compression", "IFD0:BitsPerSample", "IFD0:PhotometricInterpretation", "IFD0:SamplesPerPixel",
                        "IFD0:Predictor", "IFD0:ExtraSamples", "IFD0:ResolutionUnit", "File:ExifByteOrder"] {
                XCTAssertEqual(after[tag].map(String.init(describing:)), before[tag].map(String.init(describing:)), "\(name): \(tag)")
            }
            let quarter = (5...8).contains(Int(String(name.last { $0.isNumber }!))!)
            XCTAssertEqual(after["IFD0:XResolution"] as? Double, before[quarter ? "IFD0:YResolution" : "IFD0:XResolution"] as? Double, name)
            if name.hasPrefix("deflate") {
                XCTAssertEqual(after["ICC-header:ProfileDescription"] as? String ?? after["ICC_Profile:ProfileDescription"] as? String,
                               before["ICC-header:ProfileDescription"] as? String ?? before["ICC_Profile:ProfileDescription"] as? String,
                               "\(name): ICC profile not kept")
                XCTAssertNotNil(after.keys.first { $0.hasPrefix("ICC") }, "\(name): ICC profile not kept")
            }

            // Clean is a fixed point: the output scans clean, and a second clean changes no byte.
            let rescan = FileProcessor(options: ProcessingOptions(policy: policy)).scan(InputFile(path: output, relative: name))
            XCTAssertEqual(rescan.status, .clean, name)
            let again = tmp.file("again-" + name)
            XCTAssertEqual(Run.clean(output, to: again, policy: policy).status, .clean, name)
            XCTAssertEqual(FileManager.default.contents(atPath: again), FileManager.default.contents(atPath: output), name)
        }
    }

    /// Tiled and multi-page TIFFs keep the tag even when re-encoding is allowed, and say why.
    func testOddLayoutsKeepTheTagWithAReason() {
        let tmp = TempDir()
        for fixture in Self.keptLayouts {
            let name = (fixture as NSString).lastPathComponent
            let output = tmp.file(name)
            let report = Run.clean(Fixture.path(fixture), to: output, policy: OrientationReencodeTests.reencoding)
            XCTAssertEqual(report.status, .cleaned, "\(name): \(report.error?.message ?? "")")
            XCTAssertEqual(report.method, .remux, name)
            XCTAssertNil(report.reencode, name)
            let orientation = report.findings.first { $0.item.key == "exif:Orientation" }
            XCTAssertEqual(orientation?.outcome, .keptAsFallback, name)
            XCTAssertTrue(orientation?.reason?.contains(name.hasPrefix("tiled") ? "tiled" : "multi-page") == true, orientation?.reason ?? "")
            XCTAssertEqual(Oracle.exiftool(output)["IFD0:Orientation"] as? Int, 6, name)
            XCTAssertEqual(Oracle.pixels(output, autoOrient: true), Oracle.pixels(Fixture.path(fixture), autoOrient: true), name)
        }
    }

    /// With `reencode: false` (every shipped policy) TIFF behaves as before: the tag stays, strips are copied.
    func testShippedPoliciesKeepTheTagAndTheStrips() {
        let tmp = TempDir()
        for policy in ["strict", "share", "location"] {
            for fixture in Self.rotated + Self.keptLayouts {
                let name = (fixture as NSString).lastPathComponent
                let output = tmp.file("\(policy)-\(name)")
                let report = Run.clean(Fixture.path(fixture), to: output, policy: policy)
                XCTAssertEqual(report.status, .cleaned, "\(policy) \(name)")
                XCTAssertEqual(report.method, .remux, "\(policy) \(name)")
                XCTAssertNil(report.reencode, "\(policy) \(name)")
                let orientation = report.findings.first { $0.item.key == "exif:Orientation" }
                if Run.policy(policy).orientation == .bake {
                    XCTAssertEqual(orientation?.outcome, .keptAsFallback, "\(policy) \(name)")
                    XCTAssertEqual(orientation?.reason, "rotating TIFF strips or tiles would mean decoding and re-encoding them", "\(policy) \(name)")
                } else {
                    XCTAssertEqual(orientation?.outcome, .kept, "\(policy) \(name)")
                }
                // The strips are copied whatever the policy; one policy's worth of ImageMagick runs shows it.
                if policy == "strict" {
                    XCTAssertEqual(Oracle.pixels(output, autoOrient: false), Oracle.pixels(Fixture.path(fixture), autoOrient: false),
                                   "\(policy) \(name): stored pixels changed")
                }
            }
        }
    }

    /// Strips libtiff cannot decode: the bake and the conversion fail with libtiff's message and write nothing.
    func testUndecodableStripsFailAndWriteNothing() throws {
        let tmp = TempDir()
        let fixture = Fixture.path("tiff/orient/lzw-6.tif")
        var bytes = Array(try XCTUnwrap(FileManager.default.contents(atPath: fixture)))
        // ExifTool says where the strips are; their LZW codes are scrambled.
        let offsets = String(describing: try XCTUnwrap(Oracle.exiftool(fixture)["IFD0:StripOffsets"]))
        for offset in offsets.split(separator: " ").compactMap({ Int($0) }) {
            for i in stride(from: offset + 5, to: offset + 40, by: 3) { bytes[i] ^= 0xA5 }
        }
        let input = tmp.file("damaged.tif")
        XCTAssertTrue(FileManager.default.createFile(atPath: input, contents: Data(bytes)))

        let baked = tmp.file("baked.tif")
        let report = Run.clean(input, to: baked, policy: OrientationReencodeTests.reencoding)
        XCTAssertEqual(report.status, .error)
        XCTAssertTrue(report.error?.message.contains("libtiff") == true, report.error?.message ?? "")
        XCTAssertFalse(FileManager.default.fileExists(atPath: baked))

        var options = ProcessingOptions(policy: Run.policy("strict"))
        options.conversion = ConversionOptions(target: .png)
        let converted = tmp.file("converted.png")
        let conversion = FileProcessor(options: options).clean(InputFile(path: input, relative: "damaged.tif"), output: .file(converted))
        XCTAssertEqual(conversion.status, .error)
        XCTAssertFalse(FileManager.default.fileExists(atPath: converted))
    }
}
