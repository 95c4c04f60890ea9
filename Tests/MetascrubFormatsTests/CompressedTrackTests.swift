// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubCore
import XCTest

/// A Matroska text track whose frames mkvmerge compressed with zlib (drone SRT telemetry, a position per frame):
/// the scanner inflates the frames before it reads them, so the track is a location item and goes with its
/// blocks under every policy; the video decodes the same.
final class CompressedTrackTests: XCTestCase {
    let dir = TempDir()

    func testZlibCompressedTelemetryTrackIsReadAndRemoved() throws {
        try Tool.require("ffmpeg", "mkvextract")
        let input = Fixture.path("video/srt-zlib.mkv")
        XCTAssertFalse(Oracle.contains(input, "CANARY-SRT-PILOT"), "the fixture's text should only be readable inflated")
        XCTAssertTrue(Self.subtitles(input, in: dir.file("in.srt")).contains("CANARY-SRT-PILOT"), "mkvextract cannot read the track")
        let telemetry = Run.scan(input).findings.map(\.item).filter { $0.key == "matroska:track/telemetry-subtitles" }
        XCTAssertEqual(telemetry.count, 1)
        XCTAssertEqual(telemetry.first?.category, .location)
        let video = Self.video(input)
        XCTAssertEqual(video.count, 10)
        for policy in NestedStreamTests.policies {
            let output = dir.file("\(policy).mkv")
            let report = Run.clean(input, to: output, policy: policy)
            XCTAssertEqual(report.status, .cleaned, "\(policy): \(report.error?.message ?? "")")
            XCTAssertEqual(Self.subtitles(output, in: dir.file("\(policy).srt")), "", "\(policy): the telemetry track is still there")
            XCTAssertEqual(Self.video(output), video, "\(policy): decoded video changed")
            XCTAssertEqual(Run.scan(output, policy: policy).status, .clean, "\(policy): not a fixed point")
        }
    }

    /// The text of the file's subtitle tracks as mkvextract (mkvtoolnix, which inflates them) writes them.
    static func subtitles(_ path: String, in file: String) -> String {
        let info = String(decoding: Tool.run(["mkvmerge", "-J", path]).stdout, as: UTF8.self)
        guard let json = try? JSONSerialization.jsonObject(with: Data(info.utf8)) as? [String: Any],
              let tracks = json["tracks"] as? [[String: Any]] else { return "mkvmerge -J failed" }
        var text = ""
        for track in tracks where track["type"] as? String == "subtitles" {
            guard let id = track["id"] as? Int else { continue }
            Tool.run(["mkvextract", path, "tracks", "\(id):\(file)"])
            text += (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
        }
        return text
    }

    static func video(_ path: String) -> [String] {
        let r = Tool.run(["ffmpeg", "-nostdin", "-v", "error", "-i", path, "-map", "0:v", "-f", "framemd5", "-"])
        return String(decoding: r.stdout, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }.map(String.init)
    }
}
