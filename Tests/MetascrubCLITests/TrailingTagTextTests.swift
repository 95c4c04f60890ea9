// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import XCTest

/// APEv2, Lyrics3 and ID3v1 tags after MPEG audio are read like any tag (`scripts/fixtures/parts/78-kept.sh`): a
/// position in an APE comment, in Lyrics3 lyrics or in an ID3v1 comment goes under `location`, which keeps titles
/// and comments, as under `share` and `strict`. ExifTool reads the outputs; ffmpeg's frame digests compare audio.
final class TrailingTagTextTests: XCTestCase {
    var tmp = ""

    override func setUp() { tmp = Harness.makeTemp("trailing-tags") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: tmp) }

    func framemd5(_ path: String) -> String {
        let r = Harness.exec("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-map", "0:a", "-f", "framemd5", "-"],
                             cwd: tmp)
        XCTAssertEqual(r.status, 0, r.stderr)
        return String(decoding: r.stdout, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }
            .joined(separator: "\n")
    }

    func testPositionsInTrailingTagsAreRemovedUnderEveryPolicy() throws {
        try Harness.requireBinary(); try Harness.require("exiftool"); try Harness.require("ffmpeg")
        let input = Harness.fixture("kept/trailing-tags.mp3")
        let before = Harness.exec("exiftool", ["-a", "-G1", "-s", input], cwd: tmp).out
        for tag in ["[APE]", "[Lyrics3]", "[ID3v1]"] {
            XCTAssertTrue(before.contains(tag) && before.contains("48.8584"), "fixture lacks \(tag): \(before)")
        }
        let audio = framemd5(input)
        for policy in ["location", "share", "strict"] {
            let out = "\(tmp)/\(policy).mp3"
            let r = Harness.metascrub(["clean", "--policy", policy, input, "--output", out])
            XCTAssertEqual(r.status, 0, "\(policy): \(r.out) \(r.stderr)")
            let after = Harness.exec("exiftool", ["-a", "-G1", "-s", out], cwd: tmp).out
            XCTAssertFalse(after.contains("48.8584"), "\(policy): a position is left: \(after)")
            let bytes = try XCTUnwrap(Harness.data(out))
            for form in ["48.8584", "2.2945"].flatMap({ [Data($0.utf8), $0.data(using: .utf16LittleEndian)!] }) {
                XCTAssertNil(bytes.range(of: form), "\(policy): position bytes left")
            }
            if policy == "strict" { XCTAssertNil(bytes.range(of: Data("CANARY-".utf8)), "strict left a canary") }
            XCTAssertEqual(framemd5(out), audio, "\(policy): audio frames differ")
            let again = Harness.metascrub(["clean", "--policy", policy, out, "--in-place"])
            XCTAssertEqual(again.status, 0, again.out + again.stderr)
            XCTAssertEqual(Harness.data(out), bytes, "\(policy): the fixed point does not hold")
        }
    }
}
