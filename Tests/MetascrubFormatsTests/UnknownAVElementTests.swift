// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import MetascrubCore
@testable import MetascrubFormats
import XCTest

/// Every audio/video row of the format registry, given a file a real muxer wrote with an element of the
/// container's own kind that no reader lists and slack after known fields, each holding a user path and a
/// position: the clean removes them or refuses, under strict, share and location, never `cleaned` with planted
/// bytes left. The output is searched by Python (ASCII, UTF-16LE/BE, inside every zlib stream); the decoded
/// streams are ffmpeg's framemd5 of the input (or of the file before planting, where the planted bytes break
/// the decoder's frame sync), and a second clean finds nothing.
final class UnknownAVElementTests: XCTestCase {
    struct Case {
        var fixture: String
        /// The file whose decoded frames the output must have (the fixture itself when nil).
        var decodesLike: String?
    }

    /// Cases by registry row. A new audio/video row without cases fails `testEveryAVRowHasACase`.
    static let cases: [String: [Case]] = [
        "mp4": [Case(fixture: "unknown-av/boxes.mp4"), Case(fixture: "unknown-av/dref.mp4"),
                Case(fixture: "unknown-av/stsd-extension.mp4"), Case(fixture: "unknown-av/stsd-extension.m4a")],
        "mov": [Case(fixture: "unknown-av/boxes.mov")],
        "matroska": [Case(fixture: "unknown-av/elements.mkv"), Case(fixture: "unknown-av/aegisub.mkv")],
        "avi": [Case(fixture: "unknown-av/chunks.avi")],
        "wav": [Case(fixture: "unknown-av/sampler.wav")],
        "aiff": [Case(fixture: "unknown-av/editor.aiff")],
        "flac": [Case(fixture: "unknown-av/blocks.flac")],
        "ogg": [Case(fixture: "unknown-av/stream.ogg")],
        "asf": [Case(fixture: "unknown-av/objects.wmv")],
        "mpegts": [Case(fixture: "unknown-av/plant.ts")],
        "mp3": [Case(fixture: "unknown-av/stream.mp3", decodesLike: "unknown-av/stream-unplanted.mp3")],
        "avformat": [Case(fixture: "unknown-av/tags.flv")],
    ]

    static var avRows: [FormatEntry] {
        FormatRegistry.entries.filter { $0.handler != nil && [.audio, .video].contains($0.format.kind) }
    }

    func testEveryAVRowHasACase() {
        for row in Self.avRows {
            XCTAssertFalse(Self.cases[row.format.id, default: []].isEmpty, "no planted-element case for the \(row.format.id) row")
        }
    }

    func testPlantedElementsGoOrTheCleanRefuses() throws {
        try Tool.require("ffmpeg", "python3")
        let tmp = TempDir()
        for row in Self.avRows {
            for c in Self.cases[row.format.id, default: []] {
                let input = Fixture.path(c.fixture), name = (c.fixture as NSString).lastPathComponent
                XCTAssertEqual(try Self.detect(input), row.format.id, "\(name) is not detected as \(row.format.id)")
                XCTAssertFalse(PlantedBytes.find(in: input).isEmpty, "\(name): nothing planted to find")
                let reference = VideoOracle.frames(Fixture.path(c.decodesLike ?? c.fixture))
                XCTAssertNotNil(reference, "\(name): ffmpeg decodes nothing")
                let events = Self.subtitleEvents(input)
                for policy in ["strict", "share", "location"] {
                    let output = tmp.file("\(policy)-\(name)")
                    let report = Run.clean(input, to: output, policy: policy)
                    // A refusal is allowed: nothing written. Passing the file on as `clean` keeps every planted byte.
                    if report.status == .error {
                        XCTAssertFalse(FileManager.default.fileExists(atPath: output), "\(policy) \(name): refused but written")
                        continue
                    }
                    let left = report.status == .cleaned ? PlantedBytes.find(in: output) : ["passed on as \(report.status)"]
                    XCTAssertEqual(left, [], "\(policy) \(name): planted bytes left")
                    guard report.status == .cleaned else { continue }
                    XCTAssertEqual(VideoOracle.frames(output), reference, "\(policy) \(name): decoded frames differ")
                    XCTAssertEqual(Self.subtitleEvents(output), events, "\(policy) \(name): subtitle events differ")
                    let again = Run.clean(output, to: tmp.file("again-\(policy)-\(name)"), policy: policy)
                    XCTAssertEqual(again.status, .clean, "\(policy) \(name): not a fixed point (\(again.findings.map(\.item.key)))")
                }
            }
        }
    }

    /// The subtitle events ffmpeg reads (as ASS dialogue lines), empty for a file without subtitles.
    static func subtitleEvents(_ path: String) -> [String] {
        let r = Tool.run(["ffmpeg", "-nostdin", "-v", "error", "-i", path, "-map", "0:s?", "-f", "ass", "-"])
        return String(decoding: r.stdout, as: UTF8.self).split(separator: "\n").filter { $0.hasPrefix("Dialogue:") }.map(String.init)
    }

    static func detect(_ path: String) throws -> String? {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return FormatRegistry.detect(Array(data.prefix(4096)))?.format.id
    }
}

/// Where the planted text (a user folder, a position in decimal and ISO 6709 notation) is in a file, by Python:
/// as ASCII, UTF-16LE and UTF-16BE, in the bytes and in every zlib stream that inflates.
enum PlantedBytes {
    static let script = """
        import sys, zlib
        data = open(sys.argv[1], "rb").read()
        forms = []
        for text in ["Planted", "48.8584", "+002.2945"]:
            forms += [text.encode(), text.encode("utf-16-le"), text.encode("utf-16-be")]
        hits = set()
        def search(buf, where):
            for form in forms:
                if form in buf:
                    hits.add(f"{form!r} {where}")
        search(data, "bytes")
        for i in range(len(data) - 1):
            if data[i] == 0x78 and data[i + 1] in (0x01, 0x5E, 0x9C, 0xDA):
                try:
                    search(zlib.decompressobj().decompress(data[i:i + (1 << 20)], 1 << 20), f"zlib at {i}")
                except zlib.error:
                    pass
        print("\\n".join(sorted(hits)))
        """

    static func find(in path: String) -> [String] {
        let r = Tool.run(["python3", "-c", script, path])
        XCTAssertEqual(r.status, 0, r.stderr)
        return String(decoding: r.stdout, as: UTF8.self).split(separator: "\n").map(String.init)
    }
}
