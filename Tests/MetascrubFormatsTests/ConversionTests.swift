// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubCore
import MetascrubFormats
import MetascrubNative
import XCTest

/// `--convert jpeg|png` (issue 16), judged by independent tools: `heif-convert` renders the reference (with
/// irot/imir applied), ImageMagick `compare -metric PSNR` measures the output against it, ExifTool lists what
/// metadata is left, ImageMagick `identify` gives the output's size.
final class ConversionTests: XCTestCase {
    override func setUpWithError() throws {
        // A missing oracle is a failure, never a pass.
        for tool in ["exiftool", "heif-convert", "djxl", "compare", "identify"] {
            XCTAssertTrue(Tool.available(tool), "\(tool) is needed (scripts/install-deps)")
        }
    }

    private func options(_ target: ConversionTarget, policy: String = "strict", quality: Int? = nil) -> ProcessingOptions {
        var options = ProcessingOptions(policy: Run.policy(policy))
        options.conversion = ConversionOptions(target: target, quality: quality)
        return options
    }

    private func convert(_ fixture: String, _ target: ConversionTarget, to output: String, policy: String = "strict") -> FileReport {
        let path = Fixture.path(fixture)
        return FileProcessor(options: options(target, policy: policy))
            .clean(InputFile(path: path, relative: (path as NSString).lastPathComponent), output: .file(output))
    }

    /// PSNR in dB of `candidate` against `reference` by ImageMagick (`inf` for identical images).
    private func psnr(_ reference: String, _ candidate: String) -> Double? {
        let r = Tool.run(["compare", "-metric", "PSNR", reference, candidate, "null:"])
        let text = r.stderr.trimmingCharacters(in: .whitespacesAndNewlines)
        if text == "inf" || text == "0" && r.status == 0 { return .infinity }
        return Double(text.split(separator: " ").first ?? "")
    }

    private func size(_ path: String) -> String {
        String(decoding: Tool.run(["identify", "-format", "%wx%h", path]).stdout, as: UTF8.self)
    }

    private func reference(_ fixture: String, in tmp: TempDir) -> String {
        let out = tmp.file((fixture as NSString).lastPathComponent + ".ref.png")
        let r = Tool.run(["heif-convert", Fixture.path(fixture), out])
        XCTAssertEqual(r.status, 0, "heif-convert failed: \(r.stderr)")
        return out
    }

    func testHEICAndAVIFConvertToJPEGWithNoMetadataAndTheSamePicture() throws {
        let tmp = TempDir()
        for fixture in ["heic/exif-xmp.heic", "heic/exif.avif", "heic/rot90.heic", "heic/gainmap.heic", "heic/depth.heic", "heic/motionphoto.heic",
                        "heic/odd-size.heic",
                        // Its Exif carries a thumbnail coded with the standard tables the output is coded with too.
                        "structure/exif-thumb.heic"] {
            let output = tmp.file((fixture as NSString).lastPathComponent + ".jpg")
            let report = convert(fixture, .jpeg, to: output)
            XCTAssertEqual(report.status, .cleaned, "\(fixture): \(report.error?.message ?? "")")
            XCTAssertEqual(report.method, .reencode, fixture)
            XCTAssertEqual(report.verification?.rescan, .passed, fixture)
            let info = try XCTUnwrap(report.reencode, fixture)
            XCTAssertEqual(info.to, "jpeg")
            XCTAssertTrue(info.encoder.contains("libjpeg-turbo"), info.encoder)
            XCTAssertTrue(info.settings.contains("quality"), info.settings)
            XCTAssertGreaterThanOrEqual(info.psnr ?? .infinity, 40, fixture)
            // ExifTool: a JPEG with nothing but its JFIF header (and an ICC profile when the source had one).
            XCTAssertEqual(Oracle.exiftool(output)["File:FileType"] as? String, "JPEG", fixture)
            XCTAssertEqual(Oracle.metadataTags(output), [], "\(fixture): ExifTool still sees metadata")
            for canary in HEIFTests.canaries {
                XCTAssertFalse(Oracle.contains(output, canary), "\(fixture): \(canary) left in the output bytes")
            }
            // The displayed image: heif-convert's render (irot applied), same size, PSNR >= 40 dB by ImageMagick.
            let ref = reference(fixture, in: tmp)
            XCTAssertEqual(size(output), size(ref), "\(fixture): displayed size differs")
            let measured = try XCTUnwrap(psnr(ref, output), fixture)
            XCTAssertGreaterThanOrEqual(measured, 40, "\(fixture): ImageMagick PSNR")
            // Clean is a fixed point: the converted file scans clean.
            XCTAssertEqual(Run.scan(output).status, .clean, fixture)
        }
    }

    /// The planar path (libheif's planar render, libjpeg fed and read back a band at a time) reports the figure
    /// ImageMagick measures between heif-convert's render and the output: the streamed check compares with the
    /// displayed render, not with something easier. Odd sides exercise the partial edge blocks and bands.
    func testPlanarConversionReportsImageMagicksFigure() throws {
        let tmp = TempDir()
        for fixture in ["heic/odd-size.heic", "heic/exif-xmp.heic", "heic/rot90.heic", "heic/exif.avif"] {
            let output = tmp.file((fixture as NSString).lastPathComponent + ".jpg")
            let report = convert(fixture, .jpeg, to: output)
            XCTAssertEqual(report.status, .cleaned, "\(fixture): \(report.error?.message ?? "")")
            let ours = try XCTUnwrap(report.reencode?.psnr, fixture)
            let theirs = try XCTUnwrap(psnr(reference(fixture, in: tmp), output), fixture)
            XCTAssertEqual(ours, theirs, accuracy: 0.01, "\(fixture): metascrub's PSNR is not ImageMagick's")
        }
        XCTAssertEqual(size(tmp.file("odd-size.heic.jpg")), "259x195")
    }

    /// The planar path measures what the interleaved one measured: the same PSNR, SSIM and largest difference
    /// for the same JPEG, computed the old way on whole images (libheif's interleaved render, TurboJPEG's decode).
    func testPlanarFigureEqualsTheWholeImageFigure() throws {
        for fixture in ["heic/odd-size.heic", "heic/rot90.heic"] {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: Fixture.path(fixture))).map { $0 }
            for settings in [JPEGEncoder.Settings(quality: 92, subsampling: .s420), .init(quality: 95, subsampling: .s444)] {
                let planar = try XCTUnwrap(HEIFDecoder.renderPlanes(bytes: bytes), fixture)
                let (jpeg, streamed) = try planar.jpeg(settings, iccProfile: nil, segments: [])
                let render = try HEIFDecoder.render(bytes: bytes).raster
                let decoded = try LosslessJPEG.decodeRGB(jpeg)
                let whole = try Fidelity.measure(render, Raster(width: decoded.width, height: decoded.height, layout: .rgb, pixels: decoded.pixels))
                XCTAssertEqual(try XCTUnwrap(streamed.psnr), try XCTUnwrap(whole.psnr), accuracy: 1e-9, "\(fixture) \(settings.summary)")
                XCTAssertEqual(streamed.ssim, whole.ssim, accuracy: 1e-9, "\(fixture) \(settings.summary)")
                XCTAssertEqual(streamed.maximumDifference, whole.maximumDifference, "\(fixture) \(settings.summary)")
            }
        }
    }

    /// libde265 with worker threads (hevc_decoder.c) decodes a wavefront-parallel stream to exactly the pixels
    /// heif-convert gets from libheif's own one-thread decoder.
    func testThreadedHEVCDecodesHeifConvertsPixels() throws {
        XCTAssertTrue(HEIFDecoder.threadedHEVCInUse, "libde265 could not be loaded")
        let tmp = TempDir()
        let output = tmp.file("odd-size.png")
        XCTAssertEqual(convert("heic/odd-size.heic", .png, to: output).status, .cleaned)
        XCTAssertEqual(psnr(reference("heic/odd-size.heic", in: tmp), output), .infinity)
    }

    /// JPEG XL through libjxl; the reference render is libjxl's own command-line decoder, `djxl`.
    func testJPEGXLConvertsToJPEGAndPNG() throws {
        let tmp = TempDir()
        // extras.jxl is left out: djxl itself refuses its trailing bytes, so there is no reference render.
        for fixture in ["jxl/bare.jxl", "jxl/exif-xmp.jxl", "jxl/recompressed.jxl"] {
            let name = (fixture as NSString).lastPathComponent
            let ref = tmp.file(name + ".ref.png")
            XCTAssertEqual(Tool.run(["djxl", Fixture.path(fixture), ref]).status, 0, "djxl failed on \(fixture)")
            for target in ConversionTarget.allCases {
                let output = tmp.file(name + "." + target.fileExtension)
                let report = convert(fixture, target, to: output)
                XCTAssertEqual(report.status, .cleaned, "\(fixture) → \(target): \(report.error?.message ?? "")")
                XCTAssertEqual(report.method, .reencode)
                XCTAssertEqual(report.reencode?.decoder.hasPrefix("libjxl"), true)
                XCTAssertEqual(size(output), size(ref), "\(fixture) → \(target)")
                let measured = try XCTUnwrap(psnr(ref, output), fixture)
                XCTAssertGreaterThanOrEqual(measured, target == .png ? .infinity : 40, "\(fixture) → \(target): ImageMagick PSNR against djxl")
                let tags = Oracle.metadataTags(output).filter { !$0.hasPrefix("PNG:") || $0.contains("Text") || $0.contains("XMP") }
                XCTAssertEqual(tags, [], "\(fixture) → \(target): ExifTool still sees metadata")
                for canary in ["CANARY", "Canary"] { XCTAssertFalse(Oracle.contains(output, canary), "\(fixture): \(canary) left") }
            }
        }
    }

    /// Under `share` exactly the authorship and rights the policy keeps reach the converted file (ExifTool).
    func testSharePolicyCarriesOnlyWhatItKeeps() throws {
        let tmp = TempDir()
        for fixture in ["heic/exif-xmp.heic", "heic/exif.avif"] {
            for target in ConversionTarget.allCases {
                let output = tmp.file((fixture as NSString).lastPathComponent + "." + target.fileExtension)
                let report = convert(fixture, target, to: output, policy: "share")
                XCTAssertEqual(report.status, .cleaned, "\(fixture): \(report.error?.message ?? "")")
                let tags = Oracle.exiftool(output)
                XCTAssertEqual(tags["IFD0:Artist"] as? String, "CANARY-ARTIST-Alice", fixture)
                XCTAssertEqual(tags["IFD0:Copyright"] as? String, "CANARY-COPYRIGHT-2026", fixture)
                XCTAssertEqual(tags["XMP-dc:Creator"] as? String, "CANARY-XMP-CREATOR", fixture)
                XCTAssertEqual(tags["XMP-dc:Rights"] as? String, "CANARY-XMP-RIGHTS", fixture)
                for canary in ["CanaryMake", "CANARY-SERIAL", "CANARY-SOFTWARE", "CANARY-DESCRIPTION", "CANARY-USERCOMMENT", "CANARY-CITY"] {
                    XCTAssertFalse(Oracle.contains(output, canary), "\(fixture) → \(target): \(canary) carried although share removes it")
                }
                XCTAssertNil(tags["IFD0:Orientation"], "\(fixture): the pixels are upright; no orientation may be carried")
                XCTAssertEqual(FileProcessor(options: ProcessingOptions(policy: Run.policy("share")))
                    .scan(InputFile(path: output, relative: "x")).status, .clean, fixture)
            }
        }
    }

    func testRotatedHEICIsUprightAndSaysOrientationBaked() throws {
        let tmp = TempDir()
        let output = tmp.file("rot90.jpg")
        let report = convert("heic/rot90.heic", .jpeg, to: output)
        XCTAssertEqual(report.status, .cleaned, report.error?.message ?? "")
        XCTAssertEqual(size(output), "48x64", "irot not applied: stored 64x48, displayed 48x64")
        XCTAssertNil(Oracle.exiftool(output)["IFD0:Orientation"])
    }

    func testPNGConversionIsLosslessAgainstTheRender() throws {
        let tmp = TempDir()
        for fixture in ["heic/exif-xmp.heic", "heic/alpha.heic", "heic/rot90.heic"] {
            let output = tmp.file((fixture as NSString).lastPathComponent + ".png")
            let report = convert(fixture, .png, to: output)
            XCTAssertEqual(report.status, .cleaned, "\(fixture): \(report.error?.message ?? "")")
            XCTAssertEqual(report.reencode?.identical, true, fixture)
            let header: Set<String> = ["BitDepth", "ColorType", "Compression", "Filter", "ImageHeight", "ImageWidth", "Interlace",
                                       "SRGBRendering", "Gamma"].reduce(into: []) { $0.insert("PNG:" + $1) }
            XCTAssertEqual(Oracle.metadataTags(output).filter { !header.contains($0) }, [], fixture)
            XCTAssertEqual(psnr(reference(fixture, in: tmp), output), .infinity, "\(fixture): PNG differs from heif-convert's render")
        }
    }

    func testTransparentImageIsRefusedAsJPEGAndNothingIsWritten() {
        let tmp = TempDir()
        let output = tmp.file("alpha.jpg")
        let report = convert("heic/alpha.heic", .jpeg, to: output)
        XCTAssertEqual(report.status, .error)
        XCTAssertTrue(report.error?.message.contains("transparent") == true, report.error?.message ?? "")
        XCTAssertFalse(FileManager.default.fileExists(atPath: output))
    }

    func testBelowThePolicyThresholdNothingIsWritten() {
        let tmp = TempDir()
        let output = tmp.file("low.jpg")
        var options = options(.jpeg, quality: 5)
        options.policy.minimumPSNR = 45
        let path = Fixture.path("heic/exif-xmp.heic")
        let report = FileProcessor(options: options).clean(InputFile(path: path, relative: "exif-xmp.heic"), output: .file(output))
        XCTAssertEqual(report.status, .error)
        XCTAssertEqual(report.error?.code, MetascrubError.verificationFailed(reason: "").code)
        XCTAssertFalse(FileManager.default.fileExists(atPath: output))
    }

    func testOutputDirRenamesAndACollisionIsAnErrorNotAnOverwrite() async throws {
        let tmp = TempDir()
        let input = tmp.file("in")
        try FileManager.default.createDirectory(atPath: input, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Fixture.path("heic/exif-xmp.heic"), toPath: input + "/IMG_0001.HEIC")
        try FileManager.default.copyItem(atPath: Fixture.path("heic/exif.avif"), toPath: input + "/IMG_0002.avif")
        try FileManager.default.copyItem(atPath: Fixture.path("heic/rot90.heic"), toPath: input + "/IMG_0002.heic")
        let out = tmp.file("out")
        let report = await Engine(options: options(.jpeg), jobs: 1).clean([input], output: .directory(out))
        let byName = Dictionary(uniqueKeysWithValues: report.files.map { (($0.path as NSString).lastPathComponent, $0) })
        XCTAssertEqual(byName["IMG_0001.HEIC"]?.status, .cleaned)
        XCTAssertEqual(byName["IMG_0001.HEIC"]?.output, out + "/IMG_0001.jpg")
        XCTAssertTrue(FileManager.default.fileExists(atPath: out + "/IMG_0001.jpg"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: out + "/IMG_0001.HEIC"))
        // IMG_0002.avif and IMG_0002.heic both become IMG_0002.jpg: one is written, the other refused.
        let second = [byName["IMG_0002.avif"]?.status, byName["IMG_0002.heic"]?.status]
        XCTAssertEqual(second.filter { $0 == .cleaned }.count, 1, "\(second)")
        XCTAssertEqual(second.filter { $0 == .error }.count, 1, "\(second)")
    }

    func testSharedPoliciesWithoutConvertStillRemux() {
        let tmp = TempDir()
        let report = Run.clean(Fixture.path("heic/exif-xmp.heic"), to: tmp.file("x.heic"))
        XCTAssertEqual(report.method, .remux)
        XCTAssertNil(report.reencode)
    }

    func testEveryReportFormatSaysReencode() throws {
        let tmp = TempDir()
        var report = convert("heic/exif-xmp.heic", .jpeg, to: tmp.file("x.jpg"))
        report.sha256Before = nil
        let full = Report(tool: .init(version: "test"), command: .clean, policy: .init(name: "strict", digest: "sha256:0"), files: [report])
        let json = try JSONReportRenderer().render(full)
        XCTAssertTrue(json.contains("\"reencode\"") && json.contains("\"psnr_db\"") && json.contains("\"method\" : \"reencode\""), json)
        let text = try TextReportRenderer().render(full)
        XCTAssertTrue(text.contains("by reencode") && text.contains("PSNR") && text.contains("libjpeg-turbo"), text)
        let sarif = try SARIFReportRenderer().render(full)
        XCTAssertTrue(sarif.contains("metascrub/reencode") && sarif.contains("psnrDb"), sarif)
        let brief = try BriefReportRenderer().render(full)
        XCTAssertTrue(brief.contains("re-encoded heif → jpeg"), brief)
    }
}
