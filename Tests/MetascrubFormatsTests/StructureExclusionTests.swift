// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubCore
@testable import MetascrubFormats
import XCTest

/// Structure is what a reader understands, not whatever is not metadata: unknown JPEG markers, slack after the
/// JFIF and Adobe fields, over-long PNG chunks, bytes after the IDAT zlib stream, GIF plain text and extra
/// sub-blocks, WebP chunks nested in ANMF frames and an over-long ANIM are `unknown` items (removed by every
/// shipped policy); pCAL/sCAL and plain text are content. Judged by the output's bytes, ImageMagick's decoded
/// pixels (every frame) and a second clean.
final class StructureExclusionTests: XCTestCase {
    struct Case {
        var fixture: String
        /// Keys the scan must list as unknown items.
        var unknownKeys: [String]
        /// Canaries in those items: gone under every shipped policy.
        var unknownCanaries: [String]
        /// Whose pixels the output must decode to (the fixture itself, or a file with the same coded image).
        var pixelsOf: String?
    }

    static let cases = [
        Case(fixture: "structure/unknown-markers.jpg", unknownKeys: ["jpeg:DNL", "jpeg:APP9:GenericVendor", "jpeg:JPG13"],
             unknownCanaries: ["CANARY-DNL-OWNER", "CANARY-APP9-OWNER", "CANARY-JPG13-OWNER"],
             // libjpeg refuses the JPG13 marker: the same scan in the slack fixture is the reference.
             pixelsOf: "structure/segment-slack.jpg"),
        Case(fixture: "structure/segment-slack.jpg", unknownKeys: ["jpeg:APP0-slack", "jpeg:APP14-slack"],
             unknownCanaries: ["CANARY-JFIF-SLACK", "CANARY-ADOBE-SLACK"]),
        Case(fixture: "structure/chunk-slack.png", unknownKeys: ["png:pHYs-slack", "png:IDAT-tail"],
             unknownCanaries: ["CANARY-PHYS-SLACK", "CANARY-IDAT-TAIL"]),
        Case(fixture: "structure/extension-slack.gif", unknownKeys: ["gif:graphiccontrol-slack", "gif:NETSCAPE20-slack"],
             unknownCanaries: ["CANARY-GCE-SUBBLOCK", "CANARY-NETSCAPE-SUBBLOCK"]),
        Case(fixture: "structure/nested-chunks.webp", unknownKeys: ["webp:ANIM-unknown", "webp:ANMF-unknown"],
             unknownCanaries: ["CANARY-ANIM-SLACK", "CANARY-ANMF-NESTED"]),
    ]

    func testPlantedStructureIsAnItemAndGoesUnderEveryPolicy() throws {
        try Tool.require("convert", "exiftool")
        let tmp = TempDir()
        for c in Self.cases {
            let input = Fixture.path(c.fixture), name = (c.fixture as NSString).lastPathComponent
            for canary in ContainerChecks.canaries(c.fixture) {
                XCTAssertTrue(Oracle.contains(input, canary), "\(name): fixture lost \(canary)")
            }
            let scan = Run.scan(input)
            for key in c.unknownKeys {
                let finding = scan.findings.first { $0.item.key == key }
                XCTAssertEqual(finding?.item.isUnknown, true, "\(name): \(key) is not an unknown item (\(scan.findings.map(\.item.key)))")
            }
            let reference = Oracle.pixels(Fixture.path(c.pixelsOf ?? c.fixture), autoOrient: false)
            XCTAssertNotNil(reference, "\(name): ImageMagick decodes no reference")
            for policy in ["strict", "share", "location"] {
                let output = tmp.file("\(policy)-\(name)")
                let report = Run.clean(input, to: output, policy: policy)
                XCTAssertEqual(report.status, .cleaned, "\(policy) \(name): \(report.error?.message ?? "")")
                XCTAssertEqual(report.verification?.contentResult, .passed, "\(policy) \(name)")
                // strict removes everything planted; share keeps the artist; location keeps content and identity.
                let all = ContainerChecks.canaries(c.fixture)
                let gone = policy == "strict" ? all : policy == "share" ? all.filter { !$0.contains("ARTIST") } : c.unknownCanaries
                for canary in gone {
                    XCTAssertFalse(Oracle.contains(output, canary), "\(policy) \(name): \(canary) left in the bytes")
                }
                XCTAssertEqual(Oracle.pixels(output, autoOrient: false), reference, "\(policy) \(name): decoded pixels differ")
                XCTAssertEqual(Run.clean(output, to: tmp.file("again-\(policy)-\(name)"), policy: policy).status, .clean,
                               "\(policy) \(name): not a fixed point")
            }
        }
    }

    /// The kept segment or chunk is written length-exact: the JFIF and Adobe fields, pHYs's nine bytes, the IDAT
    /// up to the end of its zlib stream (libpng no longer warns of extra compressed data).
    func testKeptStructureIsWrittenLengthExact() throws {
        try Tool.require("convert", "exiftool")
        let tmp = TempDir()
        let jpeg = tmp.file("slack.jpg")
        XCTAssertEqual(Run.clean(Fixture.path("structure/segment-slack.jpg"), to: jpeg).status, .cleaned)
        let tags = Oracle.exiftool(jpeg)
        XCTAssertEqual(tags["JFIF:JFIFVersion"] as? String, "1 2")
        XCTAssertEqual(tags["Adobe:ColorTransform"] as? Int, 1, "the Adobe colour transform is rendering: kept")
        let bytes = try XCTUnwrap(FileManager.default.contents(atPath: jpeg))
        XCTAssertEqual(Array(bytes[2..<6]), [0xFF, 0xE0, 0x00, 0x10], "JFIF APP0 is not its 14 bytes of fields")
        let png = tmp.file("slack.png")
        XCTAssertEqual(Run.clean(Fixture.path("structure/chunk-slack.png"), to: png).status, .cleaned)
        let warnings = Tool.run(["convert", png, "rgba:-"]).stderr
        XCTAssertFalse(warnings.contains("Extra compressed data"), warnings)
        XCTAssertFalse(warnings.contains("pHYs"), warnings)
        XCTAssertEqual(Oracle.exiftool(png)["PNG-pHYs:PixelsPerUnitX"] as? Int, 2835, "pHYs lost its fields")
    }

    /// pCAL, sCAL and a GIF's plain text are content items: gone under strict, listed with their text.
    func testTextBearingChunksAreContentItems() throws {
        let png = Run.scan(Fixture.path("structure/chunk-slack.png"))
        XCTAssertEqual(png.findings.first { $0.item.key == "png:pCAL" }?.item.category, .content)
        XCTAssertEqual(png.findings.first { $0.item.key == "png:sCAL" }?.item.category, .content)
        let gif = Run.scan(Fixture.path("structure/extension-slack.gif"))
        XCTAssertEqual(gif.findings.first { $0.item.key == "gif:plainText" }?.item.category, .content)
    }
}
