// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubCore
import XCTest

final class GIFTests: XCTestCase {
    let dir = TempDir()

    func testStrictCleanRemovesCommentsXmpAndTrailer() {
        for name in ["comment.gif", "xmp.gif", "animated-loop.gif", "after-trailer.gif", "extensions.gif"] {
            let output = ContainerChecks.assertStrictClean("gif/\(name)", in: dir).output
            let bytes = [UInt8](FileManager.default.contents(atPath: output)!)
            XCTAssertEqual(bytes.last, 0x3B, "\(name): does not end with the trailer byte")
            XCTAssertNil(bytes.firstRange(of: Array("XMP DataXMP".utf8)), name)
        }
    }

    func testLoopingExtensionsAreKeptAndPlainTextIsContent() {
        let loop = ContainerChecks.assertStrictClean("gif/animated-loop.gif", in: dir).output
        let tags = Oracle.exiftool(loop)
        XCTAssertEqual(tags["GIF:FrameCount"] as? Int, 2)
        XCTAssertNotNil(tags["GIF:AnimationIterations"])
        let ext = ContainerChecks.assertStrictClean("gif/extensions.gif", in: dir).output
        let bytes = [UInt8](FileManager.default.contents(atPath: ext)!)
        XCTAssertNotNil(bytes.firstRange(of: Array("ICCRGBG1012".utf8)), "ICC profile is rendering: kept under strict")
        // Plain text is free text over the image (no viewer in use draws it): a content item, gone under strict.
        XCTAssertNil(bytes.firstRange(of: Array("visible text".utf8)), "plain-text extension is content: removed under strict")
        XCTAssertNil(bytes.firstRange(of: Array("CANARYAP1.0".utf8)))
    }

    func testItemsByExtensionKind() {
        let keys = Run.scan(Fixture.path("gif/extensions.gif")).findings.map(\.item.key)
        XCTAssertEqual(keys, ["icc:profile", "gif:app:CANARYAP1.0", "gif:plainText"])
        XCTAssertEqual(Run.scan(Fixture.path("gif/comment.gif")).findings.map(\.item.key), ["gif:comment"])
        XCTAssertEqual(Run.scan(Fixture.path("gif/after-trailer.gif")).findings.map(\.item.key), ["gif:trailer"])
        XCTAssertTrue(Run.scan(Fixture.path("gif/xmp.gif")).findings.contains { $0.item.key == "xmp:dc:creator" })
    }

    func testPartialXmpIsRebuiltAsAValidExtension() {
        let output = dir.file("partial.gif")
        let report = Run.clean(Fixture.path("gif/xmp.gif"), to: output, policy: ContainerChecks.keepAllButLocation)
        XCTAssertEqual(report.status, .cleaned, "\(report.error.map { "\($0)" } ?? "")")
        let tags = Oracle.exiftool(output)
        XCTAssertEqual(tags["XMP-dc:Creator"] as? String, "CANARY-XMP-CREATOR")
        XCTAssertNil(tags["XMP-photoshop:City"])
        XCTAssertEqual(Oracle.pixels(Fixture.path("gif/xmp.gif"), autoOrient: false), Oracle.pixels(output, autoOrient: false))
    }

    func testBrokenFilesAreRefused() {
        ContainerChecks.assertRefused("gif/bad/truncated.gif", in: dir, code: "truncated")
    }

    func testTruncatedAndCorruptedInputNeverCrashes() {
        for name in ["comment.gif", "xmp.gif", "animated-loop.gif", "extensions.gif"] {
            ContainerChecks.assertRobust("gif/\(name)", in: dir)
        }
    }
}
