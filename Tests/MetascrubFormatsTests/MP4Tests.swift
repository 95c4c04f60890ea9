// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubCore
@testable import MetascrubFormats
import XCTest

/// MP4/MOV/M4A end to end, judged by independent tools: ExifTool (`-ee`, what metadata remains, timed
/// metadata included), ffprobe (tracks, rotation) and ffmpeg (decoded frames, `framemd5`).
final class MP4Tests: XCTestCase {
    override func setUpWithError() throws {
        try Tool.require("exiftool", "ffmpeg", "ffprobe")
    }

    var fixtures: [String] { Fixture.all(in: "mp4", extensions: ["mp4", "mov", "m4a"]) }

    /// Tags ExifTool reports for a movie that say nothing about the user (structure, codec, zeroed times).
    static let allowed: Set<String> = [
        "MajorBrand", "MinorVersion", "CompatibleBrands", "MovieHeaderVersion", "TimeScale", "PreferredRate", "PreferredVolume",
        "MatrixStructure", "PreviewTime", "PreviewDuration", "PosterTime", "SelectionTime", "SelectionDuration", "CurrentTime",
        "NextTrackID", "TrackHeaderVersion", "TrackID", "TrackDuration", "TrackLayer", "TrackVolume", "MediaHeaderVersion",
        "MediaTimeScale", "MediaDuration", "MediaLanguageCode", "HandlerType", "HandlerClass", "HandlerVendorID", "HandlerDescription",
        "GraphicsMode", "VideoFieldOrder", "OpColor", "CompressorID", "SourceImageWidth", "SourceImageHeight", "XResolution", "YResolution", "BitDepth",
        "PixelAspectRatio", "BufferSize", "MaxBitrate", "AverageBitrate", "VideoFrameRate", "Balance", "AudioFormat", "AudioChannels",
        "AudioBitsPerSample", "AudioSampleRate", "MediaDataSize", "MediaDataOffset", "ImageSize", "Megapixels", "AvgBitrate", "Rotation",
        "Duration", "ColorProfiles", "ColorPrimaries", "TransferCharacteristics", "MatrixCoefficients", "VideoFullRangeFlag",
        "MovieFragmentSequence", "FontTable", "Warning", "TextFont", "TextFace", "TextSize", "TextColor", "BackgroundColor",
        "FontName", "OtherFormat", "DefaultSampleDuration", "DefaultSampleSize", "DefaultSampleFlags", "EditList",
        "GenMediaVersion", "GenFlags", "GenGraphicsMode", "GenOpColor", "GenBalance", "TextSize", "FontFace", "HorizontalJustification",
        "VerticalJustification", "TextJustification", "DefaultStyle", "Hinting", "Layout", "FirstCharacter", "LastCharacter",
        "ChromaFormat", "AVCConfigurationVersion", "AVCProfileIndication", "AVCLevelIndication", "ProfileCompatibility", "PurchaseFileFormat",
        "CreateDate", "ModifyDate", "TrackCreateDate", "TrackModifyDate", "MediaCreateDate", "MediaModifyDate",
        // The text of a kept subtitle track (subtitles.mp4): what a viewer is meant to see.
        "Text", "SampleTime", "SampleDuration",
    ]

    func testFixturesExist() {
        XCTAssertGreaterThanOrEqual(fixtures.count, 15, "run scripts/make-fixtures")
    }

    /// The promise: nothing the strict policy removes is left (ExifTool with embedded documents), no canary is
    /// in the bytes, header times are zero, and every decoded video and audio frame is identical.
    func testStrictCleanLeavesNoMetadataAndTheSameFrames() throws {
        let tmp = TempDir()
        for input in fixtures {
            let name = (input as NSString).lastPathComponent
            let relative = "mp4/" + name
            let output = tmp.file(name)
            let report = Run.clean(input, to: output)
            XCTAssertEqual(report.status, .cleaned, "\(name): \(report.error?.message ?? "")")
            XCTAssertEqual(report.method, .remux, name)
            XCTAssertEqual(report.verification?.contentResult, .passed, name)
            XCTAssertEqual(VideoOracle.residual(output, allowed: Self.allowed), [], "\(name): ExifTool still sees metadata")
            for canary in ContainerChecks.canaries(relative) {
                XCTAssertFalse(Oracle.contains(output, canary), "\(name): canary \(canary) left in the output")
            }
            XCTAssertFalse(Oracle.contains(output, "x264 - core"), "\(name): x264 option string left")
            let dates = Oracle.exiftool(output).filter { !$0.key.hasPrefix("System:") && ($0.key.hasSuffix("CreateDate") || $0.key.hasSuffix("ModifyDate")) }
            for (key, value) in dates {
                XCTAssertTrue("\(value)".hasPrefix("0000:00:00"), "\(name): \(key) is \(value)")
            }
            XCTAssertEqual(VideoOracle.frames(output), VideoOracle.frames(input), "\(name): decoded frames changed")
        }
    }

    func testTimedMetadataTimecodeAndChapterTracksGoWithTheirSamples() throws {
        let tmp = TempDir()
        for (name, gone) in [("gpmd.mp4", "data"), ("timecode.mov", "data"), ("chapters.mp4", "chapter"), ("gps-subtitles.mp4", "subtitle")] {
            let input = Fixture.path("mp4/" + name), output = tmp.file(name)
            XCTAssertEqual(Run.clean(input, to: output).status, .cleaned, name)
            XCTAssertTrue(Self.streamTypes(input).contains(gone), "\(name): fixture has no \(gone) stream")
            XCTAssertFalse(Self.streamTypes(output).contains(gone), "\(name): \(gone) stream left: \(Self.streamTypes(output))")
            XCTAssertEqual(Self.streamTypes(output).filter { $0 == "video" }.count, 1, name)
            XCTAssertLessThan(try fileSize(output), try fileSize(input), name)
        }
        // The gpmd samples were interleaved with video chunks: they left mdat, the video chunks moved.
        let out = tmp.file("gpmd.mp4")
        XCTAssertFalse(Oracle.contains(out, "GPS5"), "GPMF sample bytes left in mdat")
        XCTAssertFalse(Oracle.contains(out, "tmcd"), "timecode reference left")
    }

    func testOrdinarySubtitlesAndRotationAreKept() throws {
        let tmp = TempDir()
        let subtitles = tmp.file("subtitles.mp4")
        XCTAssertEqual(Run.clean(Fixture.path("mp4/subtitles.mp4"), to: subtitles).status, .cleaned)
        XCTAssertEqual(Self.streamTypes(subtitles), ["video", "subtitle"])
        let text = Tool.run(["ffmpeg", "-v", "error", "-i", subtitles, "-map", "0:s", "-f", "srt", "-"])
        XCTAssertTrue(String(decoding: text.stdout, as: UTF8.self).contains("Hello subtitle"))

        let rotated = tmp.file("rotated.mp4")
        XCTAssertEqual(Run.clean(Fixture.path("mp4/rotated.mp4"), to: rotated).status, .cleaned)
        XCTAssertEqual(Self.rotation(rotated), Self.rotation(Fixture.path("mp4/rotated.mp4")))
        XCTAssertEqual(Self.rotation(rotated), "-90")
    }

    /// The location policy removes only where: the Apple location key goes, make and model stay (the keys box is
    /// renumbered), and nothing else moves.
    func testLocationPolicyRemovesOnlyLocationKeys() throws {
        let tmp = TempDir()
        let output = tmp.file("keys.mov")
        let report = Run.clean(Fixture.path("mp4/keys.mov"), to: output, policy: "location")
        XCTAssertEqual(report.status, .cleaned, report.error?.message ?? "")
        let tags = Oracle.exiftool(output)
        XCTAssertNil(tags.first { $0.key.contains("GPSCoordinates") || $0.key.contains("LocationInformation") }, "location left")
        XCTAssertEqual(tags["Keys:Make"] as? String, "CanaryMake")
        XCTAssertEqual(tags["Keys:Model"] as? String, "CanaryModel X1")
        XCTAssertEqual(tags["Keys:Software"] as? String, "CANARY-SOFTWARE-1.0")
        XCTAssertEqual(VideoOracle.frames(output), VideoOracle.frames(Fixture.path("mp4/keys.mov")))
    }

    func testLayoutIsKept() throws {
        let tmp = TempDir()
        for (name, check) in [("faststart.mp4", "moov before mdat"), ("co64.mp4", "co64"), ("fragmented.mp4", "moof")] {
            let output = tmp.file(name)
            XCTAssertEqual(Run.clean(Fixture.path("mp4/" + name), to: output).status, .cleaned, name)
            let reader = BoxReader(try FileByteSource(path: output), format: "MP4")
            let top = try reader.topLevel().boxes.map { $0.type.description }
            switch check {
            case "moov before mdat": XCTAssertLessThan(top.firstIndex(of: "moov")!, top.firstIndex(of: "mdat")!, "\(top)")
            case "moof": XCTAssertTrue(top.contains("moof"), "\(top)")
            default: XCTAssertTrue(Oracle.contains(output, "co64"), "64-bit chunk offsets were not kept")
            }
        }
    }

    /// `--faststart` moves moov in front of mdat; every chunk offset follows and the frames stay the same.
    func testFaststartMovesTheMovieBoxAndRepointsChunks() throws {
        let tmp = TempDir()
        let input = Fixture.path("mp4/gpmd.mp4"), output = tmp.file("faststart.mp4")
        var options = ProcessingOptions(policy: Run.policy("strict"))
        options.layout = LayoutOptions(faststart: true)
        let report = FileProcessor(options: options).clean(InputFile(path: input, relative: "gpmd.mp4"), output: .file(output))
        XCTAssertEqual(report.status, .cleaned, report.error?.message ?? "")
        let top = try BoxReader(try FileByteSource(path: output), format: "MP4").topLevel().boxes.map { $0.type.description }
        XCTAssertEqual(top, ["ftyp", "moov", "mdat"])
        XCTAssertEqual(VideoOracle.frames(output), VideoOracle.frames(input))
    }

    func testEveryMetadataFamilyIsItemised() {
        let keys = Set(fixtures.flatMap { Run.scan($0).findings.map(\.item.key) })
        for expected in ["mp4:udta/©xyz", "mp4:keys/com.apple.quicktime.location.ISO6709", "mp4:ilst/covr", "mp4:track/gpmd",
                         "mp4:track/tmcd", "mp4:chapters", "mp4:movie-time", "mp4:handler-name", "mp4:compressor-name",
                         "h264:sei/encoder-settings", "mp4:padding", "xmp:dc:creator"] {
            XCTAssertTrue(keys.contains(expected), "no \(expected) item in \(keys.sorted())")
        }
    }

    func testBrokenFilesAreRefusedAndNothingIsWritten() {
        let tmp = TempDir()
        for name in ["truncated.mp4", "chunk-outside.mp4", "bad-box-size.mp4"] {
            ContainerChecks.assertRefused("mp4/bad/" + name, in: tmp)
        }
    }

    func testTruncatedAndCorruptedMoviesNeverCrash() {
        let tmp = TempDir()
        for name in ["location.mp4", "gpmd.mp4", "fragmented.mp4", "keys.mov", "tags.m4a"] {
            ContainerChecks.assertRobust("mp4/" + name, in: tmp)
        }
    }

    // MARK: - Oracles

    /// Stream types as ffprobe lists them, plus one "chapter" per chapter (ffmpeg shows a chapter track as chapters).
    static func streamTypes(_ path: String) -> [String] {
        let r = Tool.run(["ffprobe", "-v", "error", "-show_entries", "stream=codec_type", "-of", "csv=p=0", path])
        let chapters = Tool.run(["ffprobe", "-v", "error", "-show_chapters", "-of", "csv=p=0", path])
        return String(decoding: r.stdout, as: UTF8.self).split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            + String(decoding: chapters.stdout, as: UTF8.self).split(separator: "\n").map { _ in "chapter" }
    }

    static func rotation(_ path: String) -> String {
        let r = Tool.run(["ffprobe", "-v", "error", "-select_streams", "v", "-show_entries", "stream_side_data=rotation", "-of", "csv=p=0", path])
        return String(decoding: r.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func fileSize(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    }
}
