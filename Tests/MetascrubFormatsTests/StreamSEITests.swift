// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubCore
import XCTest

/// Issue 17: SEI user data in every access unit (dashcam GPS), in plain and fragmented MP4. Scan lists the kind
/// once with a count and its first location; clean overwrites every one in place; frames stay identical.
final class StreamSEITests: XCTestCase {
    let dir = TempDir()
    static let fixtures = ["sei-every-frame.mp4", "sei-every-frame-frag.mp4"]

    func testScanListsEachKindOnceWithCountAndFirstLocation() {
        for name in Self.fixtures {
            let sei = Run.scan(Fixture.path("mp4/" + name)).findings.filter { $0.item.key == "h264:sei/user-data" }
            XCTAssertEqual(sei.count, 1, "\(name): one item per kind")
            XCTAssertTrue(sei.first?.item.detail?.contains("×20 (first: track 1 sample 1)") ?? false, "\(name): \(sei.first?.item.detail ?? "")")
        }
    }

    func testEveryFrameIsCleanedWithTheSameFrames() throws {
        XCTAssertTrue(Tool.available("ffmpeg"), "oracle ffmpeg missing")
        for name in Self.fixtures {
            let input = Fixture.path("mp4/" + name), output = dir.file(name)
            XCTAssertTrue(Oracle.contains(input, "CANARY-SEI-GPS"), "\(name): fixture without canaries")
            let report = Run.clean(input, to: output)
            XCTAssertEqual(report.status, .cleaned, name)
            XCTAssertFalse(Oracle.contains(output, "CANARY-SEI-GPS"), "\(name): SEI canary left in some frame")
            XCTAssertFalse(Oracle.contains(output, "N48.8584"), name)
            let frames = VideoOracle.frames(input)
            XCTAssertEqual(frames?.count, 20, name)
            XCTAssertEqual(frames, VideoOracle.frames(output), "\(name): decoded frames changed")
            XCTAssertEqual(Run.scan(output).status, .clean, "\(name): not a fixed point")
        }
    }
}
