// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubCore
@testable import MetascrubFormats
import XCTest

/// Issue 23, what the scanner sees: positions and names hidden in subtitle telemetry, in a photo labelled as a
/// font, in mdat bytes no track references, and in iXML/bext are found and gone under every shipped policy,
/// judged by the output's bytes and by ExifTool (`-ee`), with the decoded frames unchanged and clean a fixed point.
final class NoSilentLeakTests: XCTestCase {
    let dir = TempDir()

    static let fixtures = ["srt-telemetry.mkv", "ass-telemetry.mkv", "webvtt-telemetry.webm", "font-labelled-jpeg.mkv",
                           "mdat-unreferenced.mp4", "bwf-ixml.wav", "id3-hidden.mp3", "vorbis-position.flac", "text-position.png", "comment-position.jpg", "comment-position.mp4",
                           "comment-position.wmv", "exif-text-position.jpg", "klv-telemetry.ts",
                           "utf16-positions.jpg", "licensor-address.jpg", "iptc-positions.jpg", "mkv-titles.mkv", "chapter-position.mp4",
                           "itxt-translated.png"]
    /// The hidden position in its decimal text form (every fixture) and the canaries the manifest lists.
    static func hidden(_ name: String) -> [String] {
        Array(Set(ContainerChecks.canaries("leaks/" + name) + ["48.8583", "48.8584", "CANARY-WMV-COMMENT"]))
    }

    func testHiddenPositionsAndNamesAreGoneUnderEveryPolicy() throws {
        try Tool.require("ffmpeg", "exiftool")
        for name in Self.fixtures {
            let input = Fixture.path("leaks/" + name)
            // The originals do hold what the test looks for (else the test proves nothing).
            XCTAssertTrue(Self.hidden(name).contains { Oracle.contains(input, $0) || Self.containsUTF16(input, $0) }, "\(name): fixture lost what it hides")
            let media = Self.media(input)
            XCTAssertNotNil(media, "\(name): ffmpeg decodes nothing")
            for policy in ["strict", "share", "location"] {
                let output = dir.file("\(policy)-\(name)")
                let report = Run.clean(input, to: output, policy: policy)
                XCTAssertEqual(report.status, .cleaned, "\(policy) \(name): \(report.error.map { "\($0)" } ?? "")")
                XCTAssertEqual(report.verification?.contentResult, .passed, "\(policy) \(name)")
                let exif = Self.exiftoolText(output)
                XCTAssertFalse(exif.isEmpty, "\(policy) \(name): exiftool read nothing")
                for needle in Self.hidden(name) where !needle.isEmpty {
                    XCTAssertFalse(Oracle.contains(output, needle), "\(policy) \(name): \(needle) left in the bytes")
                    XCTAssertFalse(Self.containsUTF16(output, needle), "\(policy) \(name): \(needle) left in the bytes as UTF-16")
                    XCTAssertFalse(exif.contains(needle), "\(policy) \(name): ExifTool still shows \(needle)")
                }
                XCTAssertEqual(Self.media(output), media, "\(policy) \(name): decoded frames changed")
                try assertFixedPoint(output, policy: policy, name: name)
            }
        }
    }

    /// Telemetry subtitle tracks are one `location` item in every container with text tracks.
    func testSubtitleTelemetryIsALocationItemInEveryContainer() throws {
        for (path, key) in [("leaks/srt-telemetry.mkv", "matroska:track/telemetry-subtitles"),
                            ("leaks/ass-telemetry.mkv", "matroska:track/telemetry-subtitles"),
                            ("leaks/webvtt-telemetry.webm", "matroska:track/telemetry-subtitles"),
                            ("mp4/gps-subtitles.mp4", "mp4:track/telemetry-subtitles")] {
            let report = Run.scan(Fixture.path(path), policy: "location")
            let item = report.findings.first { $0.item.key == key }
            XCTAssertEqual(item?.item.category, .location, path)
            XCTAssertEqual(item?.disposition, .remove, path)
        }
        // An ordinary subtitle track stays, and the output still carries it.
        let output = dir.file("subtitles.mp4")
        XCTAssertEqual(Run.clean(Fixture.path("mp4/subtitles.mp4"), to: output, policy: "location").status, .clean)
        XCTAssertFalse(Run.scan(Fixture.path("mp4/subtitles.mp4"), policy: "location").findings.contains { $0.item.key.hasSuffix("telemetry-subtitles") })
    }

    /// The subtitle track is gone from the cleaned Matroska file; video and audio still play.
    func testTelemetryTrackIsDroppedAndTheFilePlays() throws {
        try Tool.require("ffprobe")
        let output = dir.file("srt.mkv")
        XCTAssertEqual(Run.clean(Fixture.path("leaks/srt-telemetry.mkv"), to: output, policy: "location").status, .cleaned)
        let probe = Tool.run(["ffprobe", "-v", "error", "-show_entries", "stream=codec_type", "-of", "csv=p=0", output])
        XCTAssertEqual(probe.status, 0)
        XCTAssertEqual(String(decoding: probe.stdout, as: UTF8.self).split(separator: "\n").map(String.init), ["video"])
        // Same size: every block of the track was voided in place.
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: output)).count,
                       try Data(contentsOf: URL(fileURLWithPath: Fixture.path("leaks/srt-telemetry.mkv"))).count)
    }

    /// A recording cut inside its last Cluster: the telemetry blocks that are there, the cut one too, are voided.
    func testTelemetryInACutClusterIsVoided() throws {
        let whole = try Data(contentsOf: URL(fileURLWithPath: Fixture.path("leaks/srt-telemetry.mkv")))
        let last = try XCTUnwrap(whole.range(of: Data("GPS (2.2949".utf8), options: .backwards))
        let input = dir.file("cut-srt.mkv")
        try whole.prefix(last.lowerBound + 20).write(to: URL(fileURLWithPath: input))
        let output = dir.file("cut-srt-out.mkv")
        let report = Run.clean(input, to: output, policy: "location")
        XCTAssertEqual(report.status, .cleaned, "\(report.error.map { "\($0)" } ?? "")")
        XCTAssertTrue(Oracle.contains(input, "48.858"))
        XCTAssertFalse(Oracle.contains(output, "48.858"))
        XCTAssertFalse(Oracle.contains(output, "CANARY-SRT"))
    }

    /// A location inside iXML is a `location` item inside the chunk, and decides the chunk under `location`.
    /// A KLV PID leaves the multiplex as null packets and leaves every PMT: ffprobe sees the video alone, and no
    /// other packet moved (the output has the input's size).
    func testKLVDataStreamLeavesTheTransportStream() throws {
        try Tool.require("ffprobe")
        let input = Fixture.path("leaks/klv-telemetry.ts")
        let streams = { (path: String) in
            String(decoding: Tool.run(["ffprobe", "-v", "error", "-show_entries", "stream=codec_name", "-of", "csv=p=0", path]).stdout,
                   as: UTF8.self).split(separator: "\n").map(String.init)
        }
        // ffprobe lists a stream once per program and once more on its own.
        let kinds = { (path: String) in Set(streams(path)).sorted() }
        XCTAssertEqual(kinds(input), ["h264", "klv"], "the fixture must declare a KLV stream")
        let scan = Run.scan(input, policy: "location")
        let klv = try XCTUnwrap(scan.findings.first { $0.item.key == "mpegts:data-stream" })
        XCTAssertEqual(klv.item.category, .location)
        XCTAssertEqual(klv.disposition, .remove)
        let output = dir.file("klv.ts")
        XCTAssertEqual(Run.clean(input, to: output, policy: "location").status, .cleaned)
        XCTAssertEqual(kinds(output), ["h264"])
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: output)[.size] as? Int,
                       try FileManager.default.attributesOfItem(atPath: input)[.size] as? Int)
    }

    func testIXMLLocationIsItemisedAndDecidesTheChunk() throws {
        let report = Run.scan(Fixture.path("leaks/bwf-ixml.wav"), policy: "location")
        let ixml = try XCTUnwrap(report.findings.firstIndex { $0.item.key == "riff:iXML" })
        let inside = report.findings.filter { $0.item.parent == ixml }
        XCTAssertTrue(inside.contains { $0.item.key == "inspect:location:element:LOCATION_GPS" && $0.item.category == .location }, "\(inside.map(\.item.key))")
        XCTAssertTrue(inside.contains { $0.item.key == "inspect:location:element:LOCATION_NAME" })
        XCTAssertEqual(report.findings[ixml].disposition, .remove)
        let bext = try XCTUnwrap(report.findings.firstIndex { $0.item.key == "riff:bext" })
        XCTAssertEqual(report.findings[bext].disposition, .remove, "bext (identity, kept by `location`) holds a position")
        XCTAssertTrue(report.findings.contains { $0.item.parent == bext && $0.item.category == .location })
        // Values stay out of the report without --show-values.
        XCTAssertFalse(report.findings.contains { $0.item.value != nil })
    }

    /// ID3 frames kept whole: a position in TXXX/COMM text and XMP inside PRIV are items inside the frames.
    func testID3FramesAreLookedInto() throws {
        let report = Run.scan(Fixture.path("leaks/id3-hidden.mp3"), policy: "location")
        for (frame, key) in [("id3:TXXX", "inspect:location:field"), ("id3:COMM", "inspect:location:dms"), ("id3:PRIV", "xmp:exif:GPSLatitude")] {
            let parent = try XCTUnwrap(report.findings.firstIndex { $0.item.key == frame }, frame)
            XCTAssertEqual(report.findings[parent].disposition, .remove, frame)
            XCTAssertTrue(report.findings.contains { $0.item.parent == parent && $0.item.key == key && $0.item.category == .location }, frame)
        }
        // The title, which holds nothing, stays under `location`.
        XCTAssertEqual(report.findings.first { $0.item.key == "id3:TIT2" }?.disposition, .keep)
    }

    /// EXIF text entries are decided by what they say: the description goes under `location`, the artist stays.
    func testExifTextEntriesAreLookedInto() throws {
        let output = dir.file("exif-text.jpg")
        XCTAssertEqual(Run.clean(Fixture.path("leaks/exif-text-position.jpg"), to: output, policy: "location").status, .cleaned)
        let tags = Oracle.exiftool(output)
        XCTAssertNil(tags["IFD0:ImageDescription"])
        XCTAssertNil(tags["IFD0:XPComment"])
        XCTAssertEqual(tags["IFD0:Artist"] as? String, "CANARY-EXIF-ARTIST")
    }

    /// A photo labelled as a font is an embedded file, not a font: `strict` removes it; a real font stays.
    func testAttachmentIsClassifiedByItsBytes() throws {
        let report = Run.scan(Fixture.path("leaks/font-labelled-jpeg.mkv"))
        let attachment = try XCTUnwrap(report.findings.first { $0.item.key == "matroska:attachment" })
        XCTAssertEqual(attachment.item.category, .embedded)
        XCTAssertEqual(attachment.disposition, .remove)
        let font = Run.scan(Fixture.path("video/tags.mkv")).findings.filter { $0.item.key == "matroska:attachment" }
        XCTAssertEqual(font.map(\.item.category).sorted(), [.embedded, .rendering])
    }

    /// Unreferenced mdat bytes are an item of their own, holding a location item; the cut file keeps every sample.
    func testUnreferencedMdatBytesAreAnItem() throws {
        let report = Run.scan(Fixture.path("leaks/mdat-unreferenced.mp4"), policy: "location")
        let gap = try XCTUnwrap(report.findings.firstIndex { $0.item.key == "container:unreferenced" })
        XCTAssertEqual(report.findings[gap].disposition, .remove)
        XCTAssertTrue(report.findings.contains { $0.item.parent == gap && $0.item.category == .location })
        // Ordinary ffmpeg output has none.
        XCTAssertFalse(Run.scan(Fixture.path("mp4/subtitles.mp4")).findings.contains { $0.item.key == "container:unreferenced" })
    }

    /// A photo hidden in a text item is scanned by its own handler: its GPS decides the item under `location`;
    /// EXIF and XMP blocks inside an item are itemised by the shared readers.
    func testEmbeddedFormatsInsideAKeptItem() throws {
        let photo = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Fixture.path("jpeg/gps-full.jpg"))))
        for (payload, expected) in [(Array("note: ".utf8) + photo, "inspect:embedded:jpeg"),
                                    (Array("<?xpacket begin=\"\"?><x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\"><rdf:Description xmlns:exif=\"http://ns.adobe.com/exif/1.0/\" exif:GPSLatitude=\"48,51.5N\"/></rdf:RDF></x:xmpmeta><?xpacket end=\"w\"?>".utf8), "xmp:exif:GPSLatitude")] {
            var items = [MetadataItem(key: "id3:COMM", category: .content, location: "ID3v2/COMM#1", offset: 100, length: Int64(payload.count))]
            var notes: [Note] = []
            let added = ContentInspector.inspect(payload, origin: 110, parent: 0, options: ScanOptions(), items: &items, notes: &notes)
            XCTAssertFalse(added.isEmpty, expected)
            XCTAssertTrue(items.contains { $0.key == expected }, "\(expected): \(items.map(\.key))")
            XCTAssertTrue(items.contains { $0.category == .location }, "\(expected): no location inside")
            // Every added item hangs below the kept item, so the policy decides the item by what it holds.
            let findings = Run.policy("location").evaluate(items)
            XCTAssertEqual(findings[0].disposition, .remove, expected)
            XCTAssertTrue(items.dropFirst().allSatisfy { $0.parent != nil })
        }
        // Nothing inside: nothing added, the item stays.
        var items = [MetadataItem(key: "id3:COMM", category: .content, location: "ID3v2/COMM#1")]
        var notes: [Note] = []
        XCTAssertEqual(ContentInspector.inspect(Array("a plain comment, take 3 of 12.5".utf8), origin: 0, parent: 0, options: ScanOptions(),
                                                items: &items, notes: &notes), [])
    }

    /// A megabyte of text is looked through in well under a second.
    func testLocationShapesAreFastEnough() {
        let text = [UInt8](repeating: 0x61, count: 1 << 19) + Array(" lat 48.8583 ".utf8) + [UInt8](repeating: 0x20, count: 1 << 19)
        let start = Date()
        XCTAssertEqual(LocationShapes.find(in: text).map(\.kind), [.field])
        XCTAssertLessThan(Date().timeIntervalSince(start), 2.0)
    }

    /// The location shapes: what counts as a position and what does not.
    func testLocationShapes() {
        func kinds(_ s: String) -> [String] { LocationShapes.find(in: Array(s.utf8)).map(\.kind.rawValue) }
        XCTAssertTrue(kinds("GPS (2.2945, 48.8583, 19), D 12.3m").contains("coordinates"))
        XCTAssertTrue(kinds("GPS (2.2945, 48.8583, 19), D 12.3m").contains("field"))
        XCTAssertEqual(kinds("[latitude: 22.547361] [longitude: 113.938202]"), ["field"])
        XCTAssertEqual(kinds("48°51'29.9\"N 2°17'40.2\"E"), ["dms"])
        XCTAssertEqual(kinds("48 deg 51' 29.88\" N"), ["dms"])
        XCTAssertEqual(kinds("+48.8583+002.2945+019.000/"), ["iso-6709"])
        XCTAssertEqual(kinds("<exif:GPSLatitude>48,51.5N</exif:GPSLatitude>"), ["element"])
        XCTAssertEqual(kinds("<LOCATION_NAME>Paris</LOCATION_NAME>"), ["element"])
        for harmless in ["version 1.2.3", "Lavf60.16.100", "GPS off", "<LOCATION_NAME></LOCATION_NAME>", "latitude unknown",
                         "A=PCM,F=48000,W=24,M=stereo", "1.5, 2.5", "x264 - core 164 r3095 - H.264/MPEG-4 AVC codec", "time 12:34:56.789"] {
            XCTAssertEqual(kinds(harmless), [], harmless)
        }
    }

    /// Space-separated degrees, minutes, seconds with hemisphere letters (flight logs, GPS receivers): found in either
    /// order of letter and number, but only as a latitude-longitude pair.
    func testHemisphereDMSPairs() {
        func kinds(_ s: String) -> [String] { LocationShapes.find(in: Array(s.utf8)).map(\.kind.rawValue) }
        XCTAssertEqual(kinds("Home point N 48 51 30.0 E 2 17 40.0"), ["dms"])
        XCTAssertEqual(kinds("home 48 51 30 N, 2 17 40 E"), ["dms"])
        XCTAssertEqual(kinds("S 33 51 54.5 W 151 12 35.6"), ["dms"])
        for harmless in ["N 12 34 56", "track 12 34 56 E", "see 1 2 3 and 4 5 6", "mode N 12 3 4 then 5"] {
            XCTAssertEqual(kinds(harmless), [], harmless)
        }
    }

    /// Scan after clean finds nothing to do; a second clean reports `clean` and changes no byte.
    func assertFixedPoint(_ output: String, policy: String, name: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let rescan = Run.scan(output, policy: policy)
        XCTAssertEqual(rescan.status, .clean, "\(policy) \(name): scan after clean: \(rescan.actionable.map(\.item.key))", file: file, line: line)
        let second = dir.file("again-\(policy)-\(name)")
        let again = Run.clean(output, to: second, policy: policy)
        XCTAssertEqual(again.status, .clean, "\(policy) \(name): second clean", file: file, line: line)
        if FileManager.default.fileExists(atPath: second) {
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: second)), try Data(contentsOf: URL(fileURLWithPath: output)), file: file, line: line)
        }
    }

    /// Decoded video and audio frames (ffmpeg framemd5), the independent proof the media did not change.
    static func media(_ path: String) -> [String]? {
        VideoOracle.frames(path)
    }

    static func containsUTF16(_ path: String, _ needle: String) -> Bool {
        guard let data = FileManager.default.contents(atPath: path) else { return false }
        return data.range(of: needle.data(using: .utf16LittleEndian)!) != nil
    }

    /// Everything `exiftool -j -a -G1 -ee` prints about the file, as one text.
    static func exiftoolText(_ path: String) -> String {
        let r = Tool.run(["exiftool", "-j", "-a", "-G1", "-ee", path])
        return String(decoding: r.stdout, as: UTF8.self)
    }
}
