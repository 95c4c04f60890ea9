// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubCore
@testable import MetascrubFormats
import XCTest

/// Issue 17: containers without a native handler go through libavformat (stream copy, bitexact muxers); judged
/// by ExifTool -ee, ffprobe's tag listing, canary bytes and ffmpeg's decoded-frame digests.
final class AVFormatTests: XCTestCase {
    let dir = TempDir()

    /// Fixture -> the registry row that must claim it.
    static let routes = [
        "tags.flv": "avformat", "mpeg2.mpg": "avformat", "tags.nut": "avformat", "tags.mxf": "avformat",
        "tags.caf": "avformat", "tags.wv": "avformat", "tags.mka": "matroska", "tags.3g2": "mp4",
    ]
    /// What ExifTool lists for a cleaned file that is container structure, written by every muxer: FLV's
    /// onMetaData stream description, MXF's fixed FFmpeg identification (bitexact: zero dates and versions).
    static let structural: Set<String> = Set<String>([
        "VideoBitrate", "VideoCodecID", "AudioCodecID", "AudioSampleBits", "AudioStereo", "FileSize", "Stereo",
        "MXFVersion", "SDKVersion", "ObjectModelVersion", "ApplicationSupplierName", "ApplicationName",
        "ApplicationVersionNumber", "ApplicationVersionString", "ApplicationPlatform", "ToolkitVersion", "EditRate",
        "Origin", "ComponentDataDefinition", "StartTimecode", "RoundedTimecodeTimebase", "EssenceStreamID",
        "IndexStreamID", "TrackID", "TrackName", "AspectRatio", "MPEGAudioVersion", "AudioLayer", "ChannelMode",
        "MSStereo", "IntensityStereo", "CopyrightFlag", "OriginalMedia", "Emphasis", "CompressorID", "BitDepth",
        "AudioFormat", "AudioChannels", "BytesPerPacket", "FramesPerPacket", "FormatFlags", "Version", "AudioType",
        "ModeExtension", "AudioEncoding", "AudioSampleSize", "FileSizeBytes", "VideoEncoding",
        // MXF essence descriptors: how the coded picture and sound are laid out.
        "DropFrame", "Bitrate", "BlackReferenceLevel", "ClosedGOPIndicator", "ColorRangeLevels", "ColorSiting",
        "ComponentDepth", "DisplayXOffset", "DisplayYOffset", "FrameLayout", "HorizontalSubsampling", "LinkedTrackID",
        "LowDelayIndicator", "MaximumBPictureCount", "MaximumGOPSize", "PaddingBits", "PresentationAspectRatio",
        "ProfileAndLevel", "SampledHeight", "SampledWidth", "SampledXOffset", "SampledYOffset", "VerticalSub-sampling",
        "VideoCodingSchemeID", "VideoLineMap", "WhiteReferenceLevel", "AverageBytesPerSecond", "BitsPerAudioSample",
        "BlockAlign", "ChannelCount", "LockedIndicator",
    ]).union(MP4Tests.allowed)

    func path(_ name: String) -> String { Fixture.path("av/" + name) }

    func testEachContainerGoesToTheRightHandler() {
        for (name, format) in Self.routes {
            XCTAssertEqual(Run.scan(path(name)).format, format, name)
        }
    }

    func testStrictCleanLeavesNoMetadataAndSameFrames() throws {
        for tool in ["ffmpeg", "ffprobe", "exiftool"] { XCTAssertTrue(Tool.available(tool), "oracle \(tool) missing") }
        for name in Self.routes.keys.sorted() {
            let input = path(name)
            let output = dir.file("out-" + name)
            let report = Run.clean(input, to: output)
            XCTAssertTrue([.cleaned, .clean].contains(report.status), "\(name): \(report.error.map { "\($0)" } ?? "")")
            if report.status == .cleaned { XCTAssertEqual(report.verification?.contentResult, .passed, name) }
            XCTAssertEqual(VideoOracle.residual(output, allowed: Self.structural), [], "\(name): ExifTool still sees metadata")
            XCTAssertEqual(Self.ffprobeTags(output), [], "\(name): ffprobe still sees tags")
            for canary in ContainerChecks.canaries("av/" + name) {
                XCTAssertFalse(Oracle.contains(output, canary), "\(name): canary \(canary) left")
            }
            let before = VideoOracle.frames(input)
            XCTAssertNotNil(before, "\(name): ffmpeg decodes nothing")
            XCTAssertEqual(before, VideoOracle.frames(output), "\(name): decoded frames changed")
            // Clean is a fixed point: the output scans clean and a second clean writes the same bytes.
            XCTAssertEqual(Run.scan(output).status, .clean, "\(name): the cleaned file still has findings")
            let again = dir.file("again-" + name)
            XCTAssertEqual(Run.clean(output, to: again).status, .clean, name)
            XCTAssertEqual(FileManager.default.contents(atPath: again), FileManager.default.contents(atPath: output), name)
        }
    }

    func testScanFindsEveryKindOfItem() {
        let keys = Set(Run.scan(path("tags.nut")).findings.map(\.item.key))
        for key in ["av:title", "av:artist", "av:location", "av:creation_time", "av:encoder", "av:stream/subtitle", "av:chapter"] {
            XCTAssertTrue(keys.contains(key), "tags.nut: \(key) not found")
        }
        let mxf = Run.scan(path("tags.mxf")).findings.filter { $0.disposition != .keep }.map(\.item.key)
        XCTAssertEqual(Set(mxf), ["av:comment_operator", "av:modification_date", "av:timecode"])
    }

    func testLocationPolicyKeepsTagsStreamsAndChapters() throws {
        let output = dir.file("location.nut")
        let report = Run.clean(path("tags.nut"), to: output, policy: "location")
        XCTAssertEqual(report.status, .cleaned)
        XCTAssertEqual(report.findings.filter { $0.outcome == .removed }.map(\.item.key), ["av:location"])
        let tags = Self.ffprobeTags(output)
        XCTAssertTrue(tags.contains("format:title=CANARY-NUT-TITLE"), "\(tags)")
        XCTAssertTrue(tags.contains("chapter:title=CANARY-NUT-CHAPTER"), "\(tags)")
        XCTAssertFalse(tags.contains { $0.hasPrefix("format:location") })
        XCTAssertTrue(Oracle.contains(output, "CANARY-NUT-SUBTITLE"), "the subtitle stream was dropped")
    }

    func testDamagedInputIsATypedErrorWithNothingWritten() throws {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path("tags.flv"))))
        bytes = Array(bytes.prefix(13)) + [UInt8](repeating: 0xEE, count: 64)
        let input = dir.file("bad.flv")
        FileManager.default.createFile(atPath: input, contents: Data(bytes))
        let output = dir.file("bad-out.flv")
        let report = Run.clean(input, to: output)
        XCTAssertEqual(report.status, .error)
        XCTAssertNotNil(report.error)
        XCTAssertFalse(FileManager.default.fileExists(atPath: output))
    }

    func testRemuxPatchesThroughTheSink() throws {
        // MXF's muxer seeks back to fill in its partitions: the memory sink takes the same patches.
        let source = try FileByteSource(path: path("tags.mxf"))
        let scan = try AVFormat().scan(source, options: ScanOptions())
        let findings = Run.policy("strict").evaluate(scan.items)
        let sink = MemoryOutputSink()
        _ = try AVFormat().clean(source, scan: scan, plan: CleanPlan(findings: findings, policy: Run.policy("strict")), to: sink)
        let file = dir.file("memory.mxf")
        FileManager.default.createFile(atPath: file, contents: Data(sink.bytes))
        XCTAssertEqual(VideoOracle.frames(path("tags.mxf")), VideoOracle.frames(file))
    }

    /// Musepack and Monkey's Audio have no libavformat muxer: a file with something to remove is refused with the
    /// items named, never passed on.
    func testReadOnlyContainersAreRefusedWithTheItemsNamed() {
        XCTAssertNil(AVContainers.muxer(demuxer: "mpc8", head: []))
        XCTAssertNil(AVContainers.muxer(demuxer: "ape", head: []))
        XCTAssertEqual(AVContainers.muxer(demuxer: "mpeg", head: [0, 0, 1, 0xBA, 0x44]), "vob")
        XCTAssertEqual(AVContainers.muxer(demuxer: "mpeg", head: [0, 0, 1, 0xBA, 0x21]), "mpeg")
        var layout = AVLayout()
        layout.demuxer = "ape"
        let item = MetadataItem(key: "av:artist", category: .identity, location: "format tags")
        layout.tags = [(AVEntry(kind: .formatTag, index: -1, key: "artist", value: "x"), 0)]
        let policy = Run.policy("strict")
        let plan = CleanPlan(findings: policy.evaluate([item]), policy: policy)
        XCTAssertThrowsError(try AVCleaner(layout: layout, items: [item], plan: plan).run(MemoryByteSource([]), to: MemoryOutputSink())) { error in
            guard case MetascrubError.unsupported(_, let reason) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.contains("av:artist"), reason)
        }
    }

    /// Every format, stream and chapter tag ffprobe reads with a value, as "scope:key=value", except structure.
    static func ffprobeTags(_ path: String) -> [String] {
        let r = Tool.run(["ffprobe", "-v", "error", "-show_entries", "format_tags:stream_tags:chapter_tags", "-of", "json", path])
        guard let json = try? JSONSerialization.jsonObject(with: r.stdout) as? [String: Any] else { return ["ffprobe failed"] }
        var tags: [String] = []
        func add(_ scope: String, _ object: Any?) {
            guard let dict = (object as? [String: Any])?["tags"] as? [String: Any] else { return }
            for (key, value) in dict where !"\(value)".isEmpty && !AVScannerOracle.neutral(key, "\(value)") {
                tags.append("\(scope):\(key)=\(value)")
            }
        }
        add("format", json["format"])
        for stream in json["streams"] as? [Any] ?? [] { add("stream", stream) }
        for chapter in json["chapters"] as? [Any] ?? [] { add("chapter", chapter) }
        return tags.sorted()
    }
}

/// The values FFmpeg's bitexact MXF muxer writes into every file (fixed identifiers, zero UMIDs), written out
/// here independently of the scanner's table.
enum AVScannerOracle {
    static func neutral(_ key: String, _ value: String) -> Bool {
        switch key {
        case "operational_pattern_ul", "company_name", "product_name", "product_version_num", "product_version",
             "application_platform", "toolkit_version_num":
            return ["FFmpeg", "OP1a Muxer", "0.0.0.0.0", "0.0.0", "Lavf"].contains(value) || key == "operational_pattern_ul"
        case "uid", "generation_uid", "product_uid": return value.hasPrefix("adab4424-2f25-4dc7-92ff-")
        case "material_package_umid", "file_package_umid": return value.hasPrefix("0x060A2B340101010501010D00130000000000")
        case "timecode": return value == "00:00:00:00"
        // ISOBMFF brands and an all-zero vendor (3G2 through the native MP4 handler), a stream's language.
        case "major_brand", "minor_version", "compatible_brands", "language": return true
        case "vendor_id": return value == "[0][0][0][0]"
        default: return false
        }
    }
}
