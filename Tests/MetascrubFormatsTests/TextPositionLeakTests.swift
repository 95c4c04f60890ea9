// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import XCTest

/// A position written as free text into a raw's EXIF description or an XMP description (not a GPS tag) is gone
/// under every shipped policy, `location` included, which keeps descriptions otherwise. Written by ExifTool into
/// copies of fixtures; searched for in the output's bytes and by ExifTool.
final class TextPositionLeakTests: XCTestCase {
    let dir = TempDir()

    func testPositionsInDescriptionsAreGoneUnderEveryPolicy() throws {
        try Tool.require("exiftool")
        for fixture in ["raw/encrypted.nef", "raw/olympus.orf", "jpeg/gps-full.jpg"] {
            let input = dir.file("pos-" + (fixture as NSString).lastPathComponent)
            try FileManager.default.copyItem(atPath: Fixture.path(fixture), toPath: input)
            let write = Tool.run(["exiftool", "-q", "-m", "-overwrite_original", "-IFD0:ImageDescription=meet at 48.8584, 2.2945",
                                  "-XMP-dc:Description=N 48 51 30.0 E 2 17 40.0", "-XMP-dc:Title=holiday", input])
            XCTAssertEqual(write.status, 0, write.stderr)
            for policy in ["strict", "share", "location"] {
                let output = dir.file("\(policy)-" + (input as NSString).lastPathComponent)
                let report = Run.clean(input, to: output, policy: policy)
                XCTAssertEqual(report.status, .cleaned, "\(fixture) \(policy): \(report.error?.message ?? "")")
                for needle in ["48.8584", "48 51 30"] {
                    XCTAssertFalse(Oracle.contains(output, needle), "\(fixture) under \(policy) keeps \(needle)")
                }
                let scan = Run.scan(output, policy: policy)
                XCTAssertFalse(scan.findings.contains { $0.disposition == .remove }, "\(fixture) under \(policy) is no fixed point")
            }
            // Under location, what holds no position stays.
            let kept = Oracle.exiftool(dir.file("location-" + (input as NSString).lastPathComponent))
            XCTAssertEqual(kept["XMP-dc:Title"] as? String, "holiday", fixture)
        }
    }
}
