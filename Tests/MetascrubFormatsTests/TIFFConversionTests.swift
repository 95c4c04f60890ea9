// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubCore
import MetascrubFormats
import XCTest

/// `--convert jpeg|png` from TIFF (issue 16): decoded by libtiff, orientation baked, ICC and what the policy
/// keeps carried. Judged by ImageMagick (`convert -auto-orient` renders the reference; `compare -metric PSNR`)
/// and ExifTool (what metadata is left).
final class TIFFConversionTests: XCTestCase {
    override func setUpWithError() throws {
        for tool in ["exiftool", "convert", "compare"] {
            XCTAssertTrue(Tool.available(tool), "\(tool) is needed (scripts/install-deps)")
        }
    }

    private func convert(_ fixture: String, _ target: ConversionTarget, to output: String, policy: String) -> FileReport {
        var options = ProcessingOptions(policy: Run.policy(policy))
        options.conversion = ConversionOptions(target: target)
        let path = Fixture.path(fixture)
        return FileProcessor(options: options).clean(InputFile(path: path, relative: (path as NSString).lastPathComponent), output: .file(output))
    }

    /// ImageMagick's RGBA samples of a file at `depth` bits, oriented as displayed when `autoOrient`.
    private func samples(_ path: String, depth: Int, autoOrient: Bool) -> [UInt8] {
        Array(Tool.run(["convert", path] + (autoOrient ? ["-auto-orient"] : []) + ["-endian", "LSB", "-depth", "\(depth)", "rgba:-"]).stdout)
    }

    func testTIFFConvertsToJPEGAboveFortyDecibelsAndUpright() throws {
        let tmp = TempDir()
        for fixture in ["tiff/orient/deflate-6.tif", "tiff/orient/lzw-3.tif", "tiff/orient/none-8.tif", "tiff/orient/gray16-deflate-6.tif",
                        "tiff/orient/tiled-6.tif", "tiff/le.tif"] {
            let name = (fixture as NSString).lastPathComponent
            let output = tmp.file(name + ".jpg")
            let report = convert(fixture, .jpeg, to: output, policy: "strict")
            XCTAssertEqual(report.status, .cleaned, "\(name): \(report.error?.message ?? "")")
            XCTAssertEqual(report.method, .reencode, name)
            XCTAssertEqual(report.reencode?.from, "tiff", name)
            XCTAssertTrue(report.reencode?.decoder.hasPrefix("libtiff") == true, name)
            let reference = tmp.file(name + ".ref.png")
            XCTAssertEqual(Tool.run(["convert", Fixture.path(fixture), "-auto-orient", reference]).status, 0)
            let r = Tool.run(["compare", "-metric", "PSNR", reference, output, "null:"])
            let measured = try XCTUnwrap(Double(r.stderr.split(separator: " ").first ?? ""), "\(name): \(r.stderr)")
            XCTAssertGreaterThanOrEqual(measured, 40, "\(name): ImageMagick PSNR against the auto-oriented TIFF")
            XCTAssertEqual(Oracle.exiftool(output)["File:FileType"] as? String, "JPEG", name)
            XCTAssertEqual(Oracle.metadataTags(output), [], "\(name): ExifTool still sees metadata")
            for canary in TIFFOrientationReencodeTests.canaries { XCTAssertFalse(Oracle.contains(output, canary), "\(name): \(canary) left") }
            XCTAssertEqual(Run.scan(output).status, .clean, name)
        }
    }

    func testTIFFConvertsToPNGWithIdenticalPixels() throws {
        let tmp = TempDir()
        for fixture in ["tiff/orient/deflate-5.tif", "tiff/orient/lzw-7.tif", "tiff/orient/none-2.tif", "tiff/orient/rgba-packbits-7.tif",
                        "tiff/orient/tiled-6.tif"] {
            let name = (fixture as NSString).lastPathComponent
            let output = tmp.file(name + ".png")
            let report = convert(fixture, .png, to: output, policy: "strict")
            XCTAssertEqual(report.status, .cleaned, "\(name): \(report.error?.message ?? "")")
            XCTAssertNil(report.reencode?.psnr, "\(name): PNG must be exact")
            XCTAssertEqual(samples(output, depth: 8, autoOrient: false), samples(Fixture.path(fixture), depth: 8, autoOrient: true),
                           "\(name): pixels differ from ImageMagick's auto-oriented render")
            XCTAssertEqual(Oracle.metadataTags(output).filter { !$0.hasPrefix("PNG:") }, [], "\(name): ExifTool still sees metadata")
            XCTAssertEqual(Run.scan(output).status, .clean, name)
        }
    }

    /// 16-bit grey and RGB stay 16-bit in a PNG, sample for sample as ImageMagick reads the source (turned);
    /// a JPEG holds 8 bits, and the report says what was reduced.
    func testSixteenBitTIFFKeepsSixteenBitsInPNGAndSaysWhatJPEGReduced() throws {
        let tmp = TempDir()
        for fixture in ["tiff/orient/rgb16-lzw-5.tif", "tiff/orient/gray16-deflate-6.tif"] {
            let name = (fixture as NSString).lastPathComponent
            let png = tmp.file(name + ".png")
            let report = convert(fixture, .png, to: png, policy: "strict")
            XCTAssertEqual(report.status, .cleaned, "\(name): \(report.error?.message ?? "")")
            XCTAssertTrue(report.reencode?.settings.hasPrefix("lossless, 16-bit") == true, report.reencode?.settings ?? "")
            XCTAssertFalse(report.notes.contains { $0.code == "reencode-depth-reduced" }, name)
            XCTAssertEqual(Oracle.exiftool(png)["PNG:BitDepth"] as? Int, 16, name)
            XCTAssertNil(Oracle.exiftool(png)["PNG:Gamma"], "\(name): the samples are not linear")
            XCTAssertEqual(samples(png, depth: 16, autoOrient: false), samples(Fixture.path(fixture), depth: 16, autoOrient: true),
                           "\(name): 16-bit samples differ from ImageMagick's auto-oriented render")

            let jpeg = tmp.file(name + ".jpg")
            let lossy = convert(fixture, .jpeg, to: jpeg, policy: "strict")
            XCTAssertEqual(lossy.status, .cleaned, "\(name): \(lossy.error?.message ?? "")")
            XCTAssertTrue(lossy.notes.contains { $0.code == "reencode-depth-reduced" && $0.message.contains("16-bit") }, name)
        }
    }

    /// Under `share` the copyright and creator go across (Exif IFD0 and XMP), the ICC profile too; nothing else.
    func testSharePolicyCarriesWhatItKeeps() throws {
        let tmp = TempDir()
        for target in [ConversionTarget.jpeg, .png] {
            let output = tmp.file("deflate-6." + target.fileExtension)
            let report = convert("tiff/orient/deflate-6.tif", target, to: output, policy: "share")
            XCTAssertEqual(report.status, .cleaned, report.error?.message ?? "")
            let tags = Oracle.exiftool(output)
            XCTAssertEqual(tags["IFD0:Artist"] as? String, "CANARY-ARTIST-Alice", "\(target)")
            XCTAssertEqual(tags["IFD0:Copyright"] as? String, "CANARY-COPYRIGHT-2026", "\(target)")
            XCTAssertEqual(tags["XMP-dc:Rights"] as? String, "CANARY-XMP-RIGHTS", "\(target)")
            XCTAssertNil(tags["IFD0:Orientation"], "\(target)")
            // The profile goes across with its text tags blanked (share removes identity); its colour tags stay.
            XCTAssertEqual(tags["ICC_Profile:ProfileDescription"] as? String ?? "", "", "\(target)")
            XCTAssertEqual(tags["ICC_Profile:RedMatrixColumn"] as? String, "0.4361 0.2225 0.0139", "\(target)")
            for gone in ["CanaryMake", "CANARY-SERIAL-7731", "CANARY-IPTC-BYLINE"] { XCTAssertFalse(Oracle.contains(output, gone), "\(target): \(gone)") }
            XCTAssertTrue(tags.keys.filter { $0.hasPrefix("GPS") }.isEmpty, "\(target): GPS left")
            var options = ProcessingOptions(policy: Run.policy("share"))
            options.conversion = ConversionOptions(target: target)
            XCTAssertEqual(FileProcessor(options: options).scan(InputFile(path: output, relative: "x")).status, .clean, "\(target)")
        }
    }

    /// Conversion decides with the same settled decisions scan and clean use (`FileProcessor.decisions`): what
    /// the handler keeps as the picture (HEIF's primary image) is kept, a TIFF bake the remux could only keep
    /// as a tag is baked into the converted pixels.
    func testConversionUsesTheSharedSettledDecisions() throws {
        let tmp = TempDir()
        for fixture in ["heic/exif-xmp.heic", "tiff/orient/lzw-6.tif"] {
            let scanned = Run.scan(Fixture.path(fixture))
            let report = convert(fixture, .jpeg, to: tmp.file("out.jpg"), policy: "strict")
            XCTAssertEqual(report.status, .cleaned, "\(fixture): \(report.error?.message ?? "")")
            XCTAssertEqual(report.findings.map(\.disposition), scanned.findings.map(\.disposition), fixture)
            XCTAssertEqual(report.findings.map(\.reason), scanned.findings.map(\.reason), fixture)
        }
        let heif = convert("heic/exif-xmp.heic", .jpeg, to: tmp.file("heif.jpg"), policy: "strict")
        XCTAssertEqual(heif.findings.first { $0.item.key == "heif:primary" }?.outcome, .kept)
        let tiff = convert("tiff/orient/lzw-6.tif", .jpeg, to: tmp.file("tiff.jpg"), policy: "strict")
        XCTAssertEqual(tiff.findings.first { $0.item.key == "exif:Orientation" }?.outcome, .baked)
    }

    /// Only the first page is converted: further pages and reduced-resolution images are listed as not carried.
    func testFurtherPagesAndThumbnailsAreListedAsNotCarried() throws {
        let tmp = TempDir()
        let pages = convert("tiff/orient/multipage-6.tif", .png, to: tmp.file("pages.png"), policy: "strict")
        XCTAssertEqual(pages.status, .cleaned, pages.error?.message ?? "")
        XCTAssertEqual(pages.reencode?.notCarried, ["1 further page"])
        XCTAssertEqual(Tool.run(["identify", "-format", "%n\\n", tmp.file("pages.png")]).stdout.count, 2, "one image in the PNG")
        let thumb = convert("tiff/multipage-thumb.tif", .jpeg, to: tmp.file("thumb.jpg"), policy: "strict")
        XCTAssertEqual(thumb.status, .cleaned, thumb.error?.message ?? "")
        XCTAssertEqual(thumb.reencode?.notCarried, ["reduced-resolution image"])
        XCTAssertTrue(thumb.notes.contains { $0.code == "reencode-not-carried" })
    }
}
