// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubCore
@testable import MetascrubFormats
import XCTest

/// Matroska/WebM, AVI, MPEG-TS/M2TS and ASF: strict cleaning judged by ExifTool (with -ee), canary bytes and
/// ffmpeg's decoded-frame digests; refusal of broken files; robustness; the H.264 SEI neutraliser.
final class VideoContainerTests: XCTestCase {
    let dir = TempDir()

    static let cleanable = ["crafted.mkv", "live.mkv", "tags.mkv", "tags.webm", "cut-cluster.mkv", "info.avi", "avchd.mts", "x264.ts", "tags.wmv"]
    /// The font attachment stays (subtitles need it), so ExifTool still lists it.
    static let fontTags: Set<String> = ["AttachedFileData", "AttachedFileMIMEType", "AttachedFileName", "AttachedFileUID"]

    func clean(_ name: String, policy: String = "strict") -> (FileReport, String) {
        let output = dir.file("out-" + name)
        let report = Run.clean(Fixture.path("video/" + name), to: output, policy: policy)
        return (report, output)
    }

    func testStrictCleanLeavesNoMetadataAndSameFrames() throws {
        try Tool.require("ffmpeg", "exiftool")
        for name in Self.cleanable {
            let input = Fixture.path("video/" + name)
            let (report, output) = clean(name)
            XCTAssertEqual(report.status, .cleaned, "\(name): \(report.error.map { "\($0)" } ?? "")")
            XCTAssertEqual(report.verification?.contentResult, .passed, name)
            XCTAssertEqual(VideoOracle.residual(output, allowed: name == "tags.mkv" ? Self.fontTags : []), [], "\(name): ExifTool still sees metadata")
            for canary in ContainerChecks.canaries("video/" + name) {
                XCTAssertFalse(Oracle.contains(output, canary), "\(name): canary \(canary) left")
            }
            let before = VideoOracle.frames(input)
            XCTAssertNotNil(before, "\(name): ffmpeg decodes nothing")
            XCTAssertEqual(before, VideoOracle.frames(output), "\(name): decoded frames changed")
            // In-place padding: same size, so every index offset is still right.
            let a = try FileManager.default.attributesOfItem(atPath: input)[.size] as? Int
            let b = try FileManager.default.attributesOfItem(atPath: output)[.size] as? Int
            XCTAssertEqual(a, b, "\(name): size changed")
        }
    }

    func testMatroskaKeepsFontsAndRemovesCoverArt() throws {
        let (report, output) = clean("tags.mkv")
        XCTAssertEqual(report.status, .cleaned)
        let attachments = report.findings.filter { $0.item.key == "matroska:attachment" }
        XCTAssertEqual(attachments.count, 2)
        XCTAssertEqual(attachments.first { $0.item.category == .rendering }?.outcome, .kept)
        XCTAssertEqual(attachments.first { $0.item.category == .embedded }?.outcome, .removed)
        let tags = Oracle.exiftool(output)
        XCTAssertEqual(tags["Matroska:AttachedFileMIMEType"] as? String, "application/x-truetype-font")
        XCTAssertFalse(Oracle.contains(output, "CANARY-COVER-ARTIST"))
        XCTAssertFalse(Oracle.contains(output, "image/jpeg"))
    }

    func testMatroskaChecksumsAndMandatoryFields() throws {
        let (report, output) = clean("crafted.mkv")
        XCTAssertEqual(report.status, .cleaned)
        let b = [UInt8](try Data(contentsOf: URL(fileURLWithPath: output)))
        // Info (0x1549A966) starts with a CRC-32 element (BF 84): it must match the rewritten body.
        let id: [UInt8] = [0x15, 0x49, 0xA9, 0x66]
        // The first occurrence is the SeekHead's SeekID; the element itself is followed by a size and BF 84.
        guard let at = (0..<b.count - 16).first(where: {
            Array(b[$0..<$0 + 4]) == id && b[$0 + 4] != 0 && Array(b[($0 + 4 + b[$0 + 4].leadingZeroBitCount + 1)...].prefix(2)) == [0xBF, 0x84]
        }) else { return XCTFail("no Info with a CRC-32") }
        let sizeLength = b[at + 4].leadingZeroBitCount + 1
        var size = Int(b[at + 4]) & (0xFF >> sizeLength)
        for i in 1..<sizeLength { size = size << 8 | Int(b[at + 4 + i]) }
        let body = at + 4 + sizeLength
        XCTAssertEqual(Array(b[body..<body + 2]), [0xBF, 0x84])
        let stored = UInt32(b[body + 2]) | UInt32(b[body + 3]) << 8 | UInt32(b[body + 4]) << 16 | UInt32(b[body + 5]) << 24
        XCTAssertEqual(ContainerChecks.crc32(b[(body + 6)..<(body + size)]), stored, "Info CRC-32 not recomputed")
        // MuxingApp and WritingApp stay (mandatory), emptied; Title, DateUTC and SegmentUID are gone.
        XCTAssertTrue(b.indices.dropLast(1).contains { b[$0] == 0x4D && b[$0 + 1] == 0x80 })
        let tags = Oracle.exiftool(output)
        XCTAssertNil(tags["Matroska:Title"])
        XCTAssertNil(tags["Matroska:DateTimeOriginal"])
        XCTAssertEqual((tags["Matroska:WritingApp"] as? String) ?? "", "")
    }

    func testASFUTF16StringsAreGone() throws {
        let (report, output) = clean("tags.wmv")
        XCTAssertEqual(report.status, .cleaned)
        for canary in ["CANARY-ASF-TITLE", "CANARY-ASF-AUTHOR", "CANARY-ASF-COPYRIGHT", "CANARY-ASF-COMMENT", "CANARY-ASF-ALBUMARTIST",
                       "CANARY-ASF-ENCODER", "CANARY-ASF-META-SERIAL", "CANARY-ASF-METALIB-PLACE"] {
            let utf16 = Data(canary.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] })
            XCTAssertTrue(try Data(contentsOf: URL(fileURLWithPath: Fixture.path("video/tags.wmv"))).range(of: utf16) != nil, "fixture lacks \(canary)")
            XCTAssertNil(try Data(contentsOf: URL(fileURLWithPath: output)).range(of: utf16), "\(canary) left")
        }
        let keys = Set(report.findings.map(\.item.key))
        XCTAssertTrue(keys.isSuperset(of: ["asf:FileProperties/CreationDate", "asf:Metadata", "asf:MetadataLibrary", "asf:ContentBranding", "asf:Padding"]))
    }

    func testAVCHDMDPMIsItemisedAndNeutralised() throws {
        let report = Run.scan(Fixture.path("video/avchd.mts"))
        let keys = Set(report.findings.map(\.item.key))
        XCTAssertTrue(keys.isSuperset(of: ["h264:sei:MDPM", "h264:sei:MDPM/DateTimeOriginal", "h264:sei:MDPM/GPS", "h264:sei:MDPM/Make",
                                           "mpegts:sdt:ServiceName", "mpegts:sdt:ServiceProvider"]))
        XCTAssertEqual(report.findings.first { $0.item.key == "h264:sei:MDPM/GPS" }?.item.category, .location)
        let (cleaned, output) = clean("avchd.mts")
        XCTAssertEqual(cleaned.status, .cleaned)
        let tags = Oracle.exiftool(output)
        XCTAssertNil(tags["H264:Make"])
        XCTAssertNil(tags["H264:DateTimeOriginal"])
        XCTAssertEqual(Run.scan(output).findings.count, 0)
    }

    func testAVIChunksBecomeJunk() throws {
        let (report, output) = clean("info.avi")
        XCTAssertEqual(report.status, .cleaned)
        let keys = Set(report.findings.map(\.item.key))
        XCTAssertTrue(keys.isSuperset(of: ["avi:IDIT", "avi:strd", "avi:strn", "avi:JUNK", "riff:INFO/IART", "riff:INFO/ISFT"]))
        XCTAssertFalse(Oracle.contains(output, "IDIT"))
        XCTAssertFalse(Oracle.contains(output, "INFO"))
        XCTAssertTrue(Oracle.contains(output, "idx1"))
    }

    func testBrokenFilesAreRefused() {
        for name in ["truncated.mkv", "bad-segment-size.mkv", "truncated.avi", "truncated.mts", "truncated.wmv"] {
            ContainerChecks.assertRefused("video/bad/\(name)", in: dir)
        }
    }

    func testTruncatedAndFlippedInputsNeverCrash() {
        for name in ["crafted.mkv", "info.avi", "avchd.mts", "tags.wmv"] {
            ContainerChecks.assertRobust("video/\(name)", in: dir)
        }
    }

    func testValuesStayOutOfReportsWithoutShowValues() {
        for name in ["crafted.mkv", "info.avi", "avchd.mts", "tags.wmv"] {
            let report = Run.scan(Fixture.path("video/" + name))
            for finding in report.findings {
                XCTAssertNil(finding.item.value, "\(name): \(finding.item.key) carries a value")
                XCTAssertFalse((finding.item.detail ?? "").contains("CANARY"), "\(name): \(finding.item.key) detail quotes a value")
            }
        }
    }

    // MARK: H.264 SEI helper

    /// An SEI NAL with one user_data_unregistered message whose payload needs emulation prevention.
    static func seiNAL(payload: [UInt8]) -> [UInt8] {
        var rbsp: [UInt8] = [5]
        var size = payload.count
        while size >= 255 { rbsp.append(0xFF); size -= 255 }
        rbsp.append(UInt8(size))
        rbsp += payload + [0x80]
        var out: [UInt8] = [0x06]
        var zeros = 0
        for b in rbsp {
            if zeros >= 2 && b <= 3 { out.append(3); zeros = 0 }
            out.append(b)
            zeros = b == 0 ? zeros + 1 : 0
        }
        return out
    }

    func testSEINeutralisationKeepsLengthAndEmulationPrevention() {
        let payloads: [[UInt8]] = [
            H264SEI.mdpmUUID + Array("MDPM".utf8) + [2, 0x18, 0x22, 0x20, 0x21, 0x07, 0x19, 0x14, 0x10, 0x11, 0x12],
            H264SEI.mdpmUUID + [0, 0, 0, 0, 0, 0, 1, 0, 0, 2, 0, 0, 3, 0, 0, 0, 0xAA],
            H264SEI.x264UUID + Array("x264 - core 164".utf8) + [0],
            [UInt8](repeating: 0, count: 300),
        ]
        for payload in payloads {
            let nal = Self.seiNAL(payload: payload)
            let messages = H264SEI.messages(nal: nal)
            XCTAssertEqual(messages.count, 1)
            guard let m = messages.first else { continue }
            XCTAssertEqual(m.payload, payload)
            guard let filler = H264SEI.neutralised(nal: nal, message: m) else { XCTFail("cannot neutralise"); continue }
            XCTAssertEqual(filler.count, m.escapedRange.count)
            var patched = nal
            patched.replaceSubrange(m.escapedRange, with: filler)
            let after = H264SEI.messages(nal: patched)
            XCTAssertEqual(after.map(\.payloadSize), [payload.count])
            XCTAssertTrue(after.first?.isNeutralised ?? false)
            XCTAssertFalse(H264SEI.hasStartCode(patched[1...]))
        }
    }

    func testInPlacePaddingElementsHaveExactSizes() {
        for total in [2, 3, 100, 127, 128, 129, 130, 16_384, 16_385, 1 << 20] {
            guard let header = EBML.void(Int64(total)) else { XCTFail("no Void for \(total)"); continue }
            let sizeLength = header[1].leadingZeroBitCount + 1
            var size = Int(header[1]) & (0xFF >> sizeLength)
            for i in 1..<sizeLength { size = size << 8 | Int(header[1 + i]) }
            XCTAssertEqual(header[0], 0xEC)
            XCTAssertEqual(header.count + size, total)
        }
        XCTAssertNil(EBML.void(1))
    }

    /// AVI and WAV read LIST/INFO through one table: the same key has the same category (and unknown flag) in
    /// both, so a policy treats `riff:INFO/IART` alike whatever the container.
    func testRIFFInfoKeysHaveOneCategoryInEveryContainer() {
        func info(_ relative: String) -> [String: MetadataItem] {
            let items = Run.scan(Fixture.path(relative)).findings.map(\.item).filter { $0.key.hasPrefix("riff:INFO/") }
            return Dictionary(items.map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
        }
        let avi = info("video/info.avi"), wav = info("audio/chunks.wav")
        let shared = Set(avi.keys).intersection(wav.keys)
        XCTAssertGreaterThanOrEqual(shared.count, 4, "the fixtures share too few INFO keys to compare: \(shared.sorted())")
        for key in shared {
            XCTAssertEqual(avi[key]?.category, wav[key]?.category, key)
            XCTAssertEqual(avi[key]?.isUnknown, wav[key]?.isUnknown, key)
        }
        XCTAssertEqual(RIFFInfo.classify("ISRC", name: "ISRC").category, .identity)
        XCTAssertEqual(RIFFInfo.classify("ISRF", name: "ISRF").category, .content)
        XCTAssertTrue(RIFFInfo.classify("IZZZ", name: "IZZZ").unknown)
    }
}
