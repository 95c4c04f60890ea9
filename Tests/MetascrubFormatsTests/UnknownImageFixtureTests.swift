// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import MetascrubCore
import XCTest

/// Files real tools made, each with an element no reader knows or bytes after known fields carrying a stranger's
/// name and position (scripts/fixtures/parts/76-unknown-images.sh): under strict, share and location the clean
/// removes them (searched as text, UTF-16 and inside every zlib and Brotli stream), the decoded pixels stay the
/// same, a second clean changes nothing and a scan of the output finds nothing to remove.
final class UnknownImageFixtureTests: XCTestCase {
    static let fixtures = [
        "unknown/structure-text.heic", "unknown/exif-unlinked-gps.jpg", "unknown/ztxt-late-position.png",
        "unknown/brob-xmp.jxl", "unknown/unknown-tag.tif", "unknown/resources.psd", "unknown/vp8x-slack.webp",
    ]
    /// Formats ImageMagick does not decode here: their pixels are compared by the handler's own content check.
    static let undecoded: Set<String> = ["jxl"]
    /// libwebp refuses a VP8X chunk of the wrong size: the same two frames img2webp wrote for the structure fixture
    /// are the reference.
    static let pixelsOf = ["vp8x-slack.webp": "structure/nested-chunks.webp"]

    func testPlantedBytesGoUnderEveryPolicyAndPixelsStay() throws {
        try Tool.require("convert", "brotli")
        let dir = TempDir()
        for fixture in Self.fixtures {
            let input = Fixture.path(fixture), name = (fixture as NSString).lastPathComponent
            XCTAssertNotEqual(Planted.findings(atPath: input), [], "\(name): the fixture lost what was planted")
            let decodes = !Self.undecoded.contains((name as NSString).pathExtension)
            let referenceFile = Self.pixelsOf[name].map(Fixture.path) ?? input
            // A PSD is compared by its composite (the first image ImageMagick reads).
            let page = name.hasSuffix(".psd") ? "[0]" : ""
            let reference = decodes ? Oracle.pixels(referenceFile + page, autoOrient: false) : nil
            if decodes { XCTAssertNotNil(reference, "\(name): ImageMagick decodes no reference") }
            for policy in ["strict", "share", "location"] {
                let output = dir.file("\(policy)-\(name)")
                let report = Run.clean(input, to: output, policy: policy)
                XCTAssertEqual(report.status, .cleaned, "\(policy) \(name): \(report.error.map { "\($0)" } ?? "")")
                XCTAssertEqual(report.verification?.contentResult, .passed, "\(policy) \(name)")
                XCTAssertEqual(Planted.findings(atPath: output), [], "\(policy) \(name): planted bytes left")
                if let reference {
                    XCTAssertEqual(Oracle.pixels(output + page, autoOrient: false), reference,
                                   "\(policy) \(name): decoded pixels differ")
                }
                let again = Run.clean(output, to: dir.file("again-\(policy)-\(name)"), policy: policy)
                XCTAssertEqual(again.status, .clean, "\(policy) \(name): not a fixed point")
                XCTAssertEqual(Run.scan(output, policy: policy).status, .clean, "\(policy) \(name): scan of the output")
            }
        }
    }

    /// What a scan lists for each planted element: an `unknown` item (removed by every shipped policy).
    func testPlantedElementsAreUnknownItems() {
        let expected: [String: [String]] = [
            "unknown/structure-text.heic": ["heif:hdlr:name", "heif:infe:name", "heif:ftyp:brands", "heif:free"],
            "unknown/exif-unlinked-gps.jpg": ["exif:unreferenced"],
            "unknown/brob-xmp.jxl": ["xmp:packet", "jxl:box:cnry"],
            "unknown/unknown-tag.tif": ["tiff:unreferenced"],
            "unknown/resources.psd": ["photoshop:resource:0x07D0"],
            "unknown/vp8x-slack.webp": ["webp:VP8X-unknown"],
        ]
        for (fixture, keys) in expected {
            let scan = Run.scan(Fixture.path(fixture))
            for key in keys {
                XCTAssertEqual(scan.findings.first { $0.item.key == key }?.item.isUnknown, true,
                               "\(fixture): \(key) is not an unknown item (\(scan.findings.map(\.item.key)))")
            }
        }
    }
}
