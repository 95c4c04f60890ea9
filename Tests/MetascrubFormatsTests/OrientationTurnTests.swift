// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubCore
import MetascrubFormats
import XCTest

/// The orientation ladder's second rung (issue 23): under `reencode: true`, a JPEG whose size is whole MCUs but
/// whose exact turn is refused for decoder rounding is turned in the DCT domain (no coefficient requantised)
/// when that decodes within min-psnr, rather than re-encoded. Judged by jpegtran (`-perfect` of the original:
/// the same tables and entropy-coded data), ImageMagick (PSNR against the `-auto-orient` render) and ExifTool.
final class OrientationTurnTests: XCTestCase {
    override func setUpWithError() throws {
        for tool in ["exiftool", "convert", "compare", "jpegtran"] {
            XCTAssertTrue(Tool.available(tool), "\(tool) is needed (scripts/install-deps)")
        }
    }

    /// 48×32, 4:2:0: whole 16×16 MCUs, and these turns decode a few levels off (decoder rounding); the vertical
    /// flip (4) decodes identically and takes the exact rung, in every policy.
    static let turns = [2, 3, 5, 6, 7, 8]
    static let aligned = turns.map { "jpeg/orient-\($0).jpg" }

    static let jpegtranOperation: [Int: [String]] = [
        2: ["-flip", "horizontal"], 3: ["-rotate", "180"], 4: ["-flip", "vertical"], 5: ["-transpose"],
        6: ["-rotate", "90"], 7: ["-transverse"], 8: ["-rotate", "270"],
    ]

    private func psnr(_ reference: String, _ candidate: String) -> Double? {
        let text = Tool.run(["compare", "-metric", "PSNR", reference, candidate, "null:"]).stderr.trimmingCharacters(in: .whitespacesAndNewlines)
        if text == "inf" { return .infinity }
        return Double(text.split(separator: " ").first ?? "")
    }

    func testAlignedRotationsAreTurnedInTheDCTDomainNotReencoded() throws {
        let tmp = TempDir()
        let policy = OrientationReencodeTests.reencoding
        for (n, fixture) in zip(Self.turns, Self.aligned) {
            let name = (fixture as NSString).lastPathComponent
            let input = Fixture.path(fixture), output = tmp.file(name)
            let report = Run.clean(input, to: output, policy: policy)
            XCTAssertEqual(report.status, .cleaned, "\(name): \(report.error?.message ?? "")")
            XCTAssertEqual(report.method, .losslessTransform, "\(name): the DCT-domain turn beats a re-encode")
            XCTAssertNil(report.reencode, name)
            XCTAssertEqual(report.findings.first { $0.item.key == "exif:Orientation" }?.outcome, .baked, name)
            let content = report.verification?.content ?? ""
            XCTAssertTrue(content.contains("no coefficient requantised") && content.contains("PSNR"), "\(name): \(content)")
            XCTAssertNil(Oracle.exiftool(output)["IFD0:Orientation"], "\(name): orientation tag left")

            // No requantisation: jpegtran's perfect transform of the original has the same tables and scan data.
            let reference = tmp.file(name + ".jpegtran.jpg")
            let turned = Tool.run(["jpegtran"] + Self.jpegtranOperation[n]! + ["-perfect", "-copy", "none", input])
            XCTAssertEqual(turned.status, 0, name)
            try turned.stdout.write(to: URL(fileURLWithPath: reference))
            XCTAssertEqual(try DQT.read(output).tables, try DQT.read(reference).tables, "\(name): DQT tables")
            XCTAssertEqual(try Self.scanData(output), try Self.scanData(reference), "\(name): entropy-coded data differs from jpegtran -perfect")

            // Decoder rounding is the only difference: not identical (the exact rung was refused), within min-psnr.
            let shown = tmp.file(name + ".ref.png")
            XCTAssertEqual(Tool.run(["convert", input, "-auto-orient", shown]).status, 0)
            let measured = try XCTUnwrap(psnr(shown, output), name)
            XCTAssertLessThan(measured, .infinity, "\(name): the fixture must be one the exact rung refuses")
            XCTAssertGreaterThanOrEqual(measured, policy.minimumPSNR, "\(name): ImageMagick PSNR against the auto-oriented original")

            // A fixed point: the output scans clean and a second clean changes no byte.
            XCTAssertEqual(FileProcessor(options: ProcessingOptions(policy: policy)).scan(InputFile(path: output, relative: name)).status, .clean, name)
            let again = tmp.file("again-" + name)
            XCTAssertNotEqual(Run.clean(output, to: again, policy: policy).method, .reencode, name)
            XCTAssertEqual(FileManager.default.contents(atPath: again), FileManager.default.contents(atPath: output), "\(name): second clean changed bytes")
        }
    }

    /// Orientation 5 (transpose) needs no whole edge MCUs (libjpeg's `jtransform_perfect_transform`): the odd
    /// 45×29 fixture is turned in the DCT domain too, while 6 at that size still has to be re-encoded.
    func testTransposeAtAnOddSizeIsTurnedAndARotationReencoded() throws {
        let tmp = TempDir()
        let policy = OrientationReencodeTests.reencoding
        let input = Fixture.path("jpeg/orient-odd-5.jpg"), output = tmp.file("odd-5.jpg")
        let report = Run.clean(input, to: output, policy: policy)
        XCTAssertEqual(report.status, .cleaned, report.error?.message ?? "")
        XCTAssertEqual(report.method, .losslessTransform)
        let reference = tmp.file("odd-5.jpegtran.jpg")
        let turned = Tool.run(["jpegtran", "-transpose", "-perfect", "-copy", "none", input])
        XCTAssertEqual(turned.status, 0)
        try turned.stdout.write(to: URL(fileURLWithPath: reference))
        XCTAssertEqual(try Self.scanData(output), try Self.scanData(reference), "entropy-coded data differs from jpegtran -perfect")
        XCTAssertEqual(Run.clean(Fixture.path("jpeg/orient-odd-6.jpg"), to: tmp.file("odd-6.jpg"), policy: policy).method, .reencode)
    }

    /// A min-psnr the turn cannot reach sends the image down the ladder: never a lossless transform below it.
    func testATurnUnderMinPSNRIsNotTaken() {
        let tmp = TempDir()
        var strict = OrientationReencodeTests.reencoding
        strict.minimumPSNR = 99
        let report = Run.clean(Fixture.path("jpeg/orient-6.jpg"), to: tmp.file("out.jpg"), policy: strict)
        XCTAssertNotEqual(report.method, .losslessTransform)
        if report.status == .cleaned { XCTAssertEqual(report.method, .reencode) }
    }

    /// Over the policy's pixel budget the DCT-domain rung does not run (it holds every coefficient and decodes
    /// the image twice). The re-encode's refusal (exit 3, nothing written) is the CLI's, which sets the
    /// process-wide budget from the policy: PixelBudgetTests.
    func testOverThePixelBudgetTheTurnIsNotTaken() {
        let tmp = TempDir()
        var small = OrientationReencodeTests.reencoding
        small.maxPixels = 1000
        let report = Run.clean(Fixture.path("jpeg/orient-6.jpg"), to: tmp.file("out.jpg"), policy: small)
        XCTAssertNotEqual(report.method, .losslessTransform)
    }

    /// Shipped policies (`reencode: false`) are unchanged: the rounded turn is refused and the tag stays.
    func testShippedPoliciesKeepTheTag() {
        let tmp = TempDir()
        for policy in ["strict", "share", "location"] {
            for fixture in Self.aligned {
                let report = Run.clean(Fixture.path(fixture), to: tmp.file("out.jpg"), policy: policy)
                XCTAssertEqual(report.status, .cleaned, "\(policy) \(fixture)")
                XCTAssertNotEqual(report.method, .losslessTransform, "\(policy) \(fixture)")
                XCTAssertNotEqual(report.method, .reencode, "\(policy) \(fixture)")
            }
        }
    }

    /// The bytes from the first SOS marker to the end, found by walking the marker segments from SOI.
    static func scanData(_ path: String) throws -> [UInt8] {
        let b = [UInt8](try XCTUnwrap(FileManager.default.contents(atPath: path)))
        var at = 2
        while at + 4 <= b.count, b[at] == 0xFF {
            if b[at + 1] == 0xDA { return Array(b[at...]) }
            at += 2 + Int(b[at + 2]) << 8 + Int(b[at + 3])
        }
        XCTFail("\(path): no SOS found")
        return []
    }
}
