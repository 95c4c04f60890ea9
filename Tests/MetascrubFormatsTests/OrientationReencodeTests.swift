// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubCore
import MetascrubFormats
import XCTest

/// `orientation: bake` with `reencode: true` on JPEGs no lossless transform can turn exactly (issue 16), judged
/// by ImageMagick (`-auto-orient` render of the original as the reference, `compare -metric PSNR`, `identify`)
/// and ExifTool (no orientation tag left).
final class OrientationReencodeTests: XCTestCase {
    override func setUpWithError() throws {
        for tool in ["exiftool", "convert", "compare", "identify", "dwebp"] {
            XCTAssertTrue(Tool.available(tool), "\(tool) is needed (scripts/install-deps)")
        }
    }

    static var reencoding: Policy {
        var policy = Run.policy("strict")
        policy.allowReencode = true
        return policy
    }

    static let fixtures = (1...8).flatMap { ["jpeg/orient-\($0).jpg", "jpeg/orient-odd-\($0).jpg"] }

    private func psnr(_ reference: String, _ candidate: String) -> Double? {
        let r = Tool.run(["compare", "-metric", "PSNR", reference, candidate, "null:"])
        let text = r.stderr.trimmingCharacters(in: .whitespacesAndNewlines)
        if text == "inf" { return .infinity }
        return Double(text.split(separator: " ").first ?? "")
    }

    func testEveryOrientationAtAlignedAndOddSizesCleansUpright() throws {
        let tmp = TempDir()
        for fixture in Self.fixtures {
            let input = Fixture.path(fixture)
            let name = (fixture as NSString).lastPathComponent
            let output = tmp.file(name)
            let report = Run.clean(input, to: output, policy: Self.reencoding)
            XCTAssertEqual(report.status, .cleaned, "\(name): \(report.error?.message ?? "")")
            XCTAssertNil(Oracle.exiftool(output)["IFD0:Orientation"], "\(name): orientation tag left")
            let reference = tmp.file(name + ".ref.png")
            XCTAssertEqual(Tool.run(["convert", input, "-auto-orient", reference]).status, 0)
            let size = { (p: String) in String(decoding: Tool.run(["identify", "-format", "%wx%h", p]).stdout, as: UTF8.self) }
            XCTAssertEqual(size(output), size(reference), "\(name): not upright")
            let measured = try XCTUnwrap(psnr(reference, output), name)
            XCTAssertGreaterThanOrEqual(measured, 40, "\(name): ImageMagick PSNR against the auto-oriented original")
            if report.method == .reencode {
                let info = try XCTUnwrap(report.reencode, name)
                XCTAssertTrue(info.reason.hasPrefix("orientation bake"), info.reason)
                XCTAssertTrue(info.settings.contains("IJG quality"), info.settings)
                XCTAssertGreaterThanOrEqual(info.psnr ?? .infinity, 40, name)
                XCTAssertEqual(report.findings.first { $0.item.key == "exif:Orientation" }?.outcome, .baked, name)
            } else {
                // Exact cases stay lossless: the DCT-domain transform or no orientation at all.
                XCTAssertTrue(report.method == .losslessTransform || report.method == .remux, "\(name): \(String(describing: report.method))")
                XCTAssertEqual(measured, .infinity, "\(name): a lossless bake must be exact")
            }
            // Clean is a fixed point: the output scans clean and a second clean writes nothing new.
            XCTAssertEqual(FileProcessor(options: ProcessingOptions(policy: Self.reencoding))
                .scan(InputFile(path: output, relative: name)).status, .clean, name)
        }
        XCTAssertTrue(Self.fixtures.contains { fixture in
            Run.clean(Fixture.path(fixture), to: tmp.file("again.jpg"), policy: Self.reencoding).method == .reencode
        }, "no fixture exercised the re-encode")
    }

    /// WebP has no lossless rotation: lossless stays lossless with identical pixels; lossy comes out at a
    /// lossy quality or, when none is close enough, losslessly. The reference is `dwebp`'s render turned by
    /// ImageMagick as Orientation=6 says.
    func testWebPOrientationIsBakedByReencoding() throws {
        let tmp = TempDir()
        for fixture in ["webp/lossless-orient6.webp", "webp/lossy-orient6.webp"] {
            let name = (fixture as NSString).lastPathComponent
            let output = tmp.file(name)
            let report = Run.clean(Fixture.path(fixture), to: output, policy: Self.reencoding)
            XCTAssertEqual(report.status, .cleaned, "\(name): \(report.error?.message ?? "")")
            XCTAssertEqual(report.method, .reencode, name)
            XCTAssertTrue(report.reencode?.encoder.hasPrefix("libwebp") == true, name)
            XCTAssertNil(Oracle.exiftool(output)["IFD0:Orientation"], "\(name): orientation tag left")
            let decoded = tmp.file(name + ".png"), reference = tmp.file(name + ".ref.png"), rendered = tmp.file(name + ".out.png")
            XCTAssertEqual(Tool.run(["dwebp", "-quiet", Fixture.path(fixture), "-o", decoded]).status, 0)
            XCTAssertEqual(Tool.run(["convert", decoded, "-rotate", "90", reference]).status, 0)
            XCTAssertEqual(Tool.run(["dwebp", "-quiet", output, "-o", rendered]).status, 0, "\(name): dwebp cannot read the output")
            let measured = try XCTUnwrap(psnr(reference, rendered), name)
            if fixture.contains("lossless") {
                XCTAssertEqual(measured, .infinity, "\(name): lossless must stay exact")
            } else {
                XCTAssertGreaterThanOrEqual(measured, 40, name)
            }
            XCTAssertEqual(FileProcessor(options: ProcessingOptions(policy: Self.reencoding))
                .scan(InputFile(path: output, relative: name)).status, .clean, name)
            // Without re-encoding the tag stays, as before.
            let kept = Run.clean(Fixture.path(fixture), to: tmp.file("strict-" + name))
            XCTAssertNotEqual(kept.method, .reencode, name)
            XCTAssertEqual(kept.findings.first { $0.item.key == "exif:Orientation" }?.outcome, .keptAsFallback, name)
        }
    }

    func testShippedPoliciesDoNotReencode() {
        let tmp = TempDir()
        for policy in ["strict", "share", "location"] {
            for fixture in Self.fixtures {
                let report = Run.clean(Fixture.path(fixture), to: tmp.file("out.jpg"), policy: policy)
                XCTAssertNotEqual(report.method, .reencode, "\(policy) \(fixture)")
                XCTAssertNil(report.reencode, "\(policy) \(fixture)")
            }
        }
    }
}
