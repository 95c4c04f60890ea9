// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubCore
import XCTest

/// Issue 17: SEI user data in every access unit (dashcam GPS), in plain and fragmented MP4, Matroska, MPEG-TS and AVI.
/// Scan lists the kind once (MP4, Matroska and AVI: with a count and its first location); clean overwrites every one
/// in place; frames stay identical.
final class StreamSEITests: XCTestCase {
    let dir = TempDir()
    static let fixtures = ["mp4/sei-every-frame.mp4", "mp4/sei-every-frame-frag.mp4", "video/sei-every-frame.mkv", "video/sei-every-frame.ts",
                            "video/sei-every-frame.avi"]

    func testScanListsEachKindOnceWithCountAndFirstLocation() {
        for (name, first) in [("mp4/sei-every-frame.mp4", "track 1 sample 1"), ("mp4/sei-every-frame-frag.mp4", "track 1 sample 1"),
                              ("video/sei-every-frame.mkv", "track 1 block 1"), ("video/sei-every-frame.avi", "stream 0 frame 1")] {
            let sei = Run.scan(Fixture.path(name)).findings.filter { $0.item.key == "h264:sei/user-data" }
            XCTAssertEqual(sei.count, 1, "\(name): one item per kind")
            XCTAssertTrue(sei.first?.item.detail?.contains("×20 (first: \(first))") ?? false, "\(name): \(sei.first?.item.detail ?? "")")
        }
        let ts = Run.scan(Fixture.path("video/sei-every-frame.ts")).findings.filter { $0.item.key.hasPrefix("h264:sei") }
        XCTAssertEqual(ts.count, 1)
        XCTAssertTrue(ts.first?.item.detail?.contains("in 20 places") ?? false, ts.first?.item.detail ?? "")
    }

    func testEveryFrameIsCleanedWithTheSameFrames() throws {
        XCTAssertTrue(Tool.available("ffmpeg"), "oracle ffmpeg missing")
        for name in Self.fixtures {
            let input = Fixture.path(name), output = dir.file((name as NSString).lastPathComponent)
            XCTAssertTrue(Oracle.contains(input, "CANARY-SEI-GPS"), "\(name): fixture without canaries")
            let report = Run.clean(input, to: output)
            XCTAssertEqual(report.status, .cleaned, name)
            XCTAssertFalse(Oracle.contains(output, "CANARY-SEI-GPS"), "\(name): SEI canary left in some frame")
            XCTAssertFalse(Oracle.contains(output, "N48.8584"), name)
            let frames = VideoOracle.frames(input)
            XCTAssertEqual(frames?.count, 20, name)
            XCTAssertEqual(frames, VideoOracle.frames(output), "\(name): decoded frames changed")
            XCTAssertEqual(Run.scan(output).status, .clean, "\(name): not a fixed point")
            if name.hasSuffix(".mkv") { XCTAssertEqual(Self.badClusterCRCs(output), "0 of 3", "\(name): Cluster CRC-32 not recomputed") }
        }
    }

    /// Motion-JPEG frames from a still camera each carry EXIF: one item with a count, every block blanked.
    /// x265's option string in the HEVC decoder configuration (MP4 hvcC, Matroska CodecPrivate): an item where it is,
    /// gone from the bytes after a clean, the frames unchanged, and a second scan finds nothing.
    func testX265OptionsInTheDecoderConfigurationAreCleaned() throws {
        try Tool.require("ffmpeg")
        for (name, location) in [("mp4/x265-hvcc.mp4", "stsd/hev1/hvcC"), ("video/x265-hvcc.mkv", "/CodecPrivate")] {
            let input = Fixture.path(name), output = dir.file((name as NSString).lastPathComponent)
            XCTAssertTrue(Oracle.contains(input, "x265 (build"), "\(name): fixture without the x265 string")
            let sei = Run.scan(input).findings.filter { $0.item.key == "hevc:sei/encoder-settings" }
            XCTAssertEqual(sei.count, 1, name)
            XCTAssertTrue(sei.first?.item.location.hasSuffix(location) ?? false, "\(name): \(sei.first?.item.location ?? "")")
            XCTAssertEqual(sei.first?.item.category, .software)
            XCTAssertEqual(Run.clean(input, to: output).status, .cleaned, name)
            XCTAssertFalse(Oracle.contains(output, "x265 (build"), "\(name): x265 string left")
            XCTAssertFalse(Oracle.contains(output, "options:"), name)
            XCTAssertEqual(VideoOracle.frames(input)?.count, 10, name)
            XCTAssertEqual(VideoOracle.frames(input), VideoOracle.frames(output), "\(name): decoded frames changed")
            XCTAssertEqual(Run.scan(output).status, .clean, "\(name): not a fixed point")
        }
    }

    func testMotionJPEGExifIsBlankedInEveryFrame() throws {
        let input = Fixture.path("video/mjpeg-exif.avi"), output = dir.file("mjpeg-exif.avi")
        let exif = Run.scan(input).findings.filter { $0.item.key == "avi:mjpeg/exif" }
        XCTAssertEqual(exif.count, 1)
        XCTAssertTrue(exif.first?.item.detail?.contains("×10 (first: stream 0 frame 1)") ?? false, exif.first?.item.detail ?? "")
        XCTAssertEqual(Run.clean(input, to: output).status, .cleaned)
        for canary in ["CANARY-MJPEG-MAKE", "CANARY-MJPEG-SERIAL", "Exif"] {
            XCTAssertTrue(Oracle.contains(input, canary), canary)
            XCTAssertFalse(Oracle.contains(output, canary), "\(canary) left in a frame")
        }
        XCTAssertEqual(VideoOracle.frames(input)?.count, 10)
        XCTAssertEqual(VideoOracle.frames(input), VideoOracle.frames(output), "decoded frames changed")
        XCTAssertEqual(VideoOracle.residual(output, allowed: AVFormatTests.structural), [], "ExifTool still sees metadata")
        XCTAssertEqual(Run.scan(output).status, .clean, "not a fixed point")
    }

    /// Clusters whose CRC-32 element does not match their other children, by an independent reader (Python's zlib).
    static func badClusterCRCs(_ path: String) -> String {
        let script = """
        import sys, zlib
        b = open(sys.argv[1], 'rb').read()
        def vint(o, mask=True):
            n = 8 - b[o].bit_length() + 1
            v = b[o] & (0xFF >> n) if mask else b[o]
            for i in range(1, n): v = v << 8 | b[o + i]
            return v, n
        def walk(o, end):
            while o < end:
                i, n = vint(o, False); s, m = vint(o + n); yield i, o + n + m, o + n + m + s; o = o + n + m + s
        bad = total = 0
        for i, d, e in walk(0, len(b)):
            if i != 0x18538067: continue
            for ci, cd, ce in walk(d, e):
                if ci != 0x1F43B675: continue
                kids = list(walk(cd, ce))
                if kids and kids[0][0] == 0xBF:
                    total += 1
                    stored = int.from_bytes(b[kids[0][1]:kids[0][2]], 'little')
                    bad += stored != zlib.crc32(b[kids[0][2]:ce])
        print('%d of %d' % (bad, total))
        """
        let r = Tool.run(["python3", "-c", script, path])
        return String(decoding: r.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
