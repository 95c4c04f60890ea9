// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubCore
import XCTest

/// Metadata that rides inside the coded stream or after a first stream: every frame of a Motion-JPEG timelapse
/// (MOV, Matroska, MP4) keeps its photo's EXIF, XMP, IPTC and comment; two `cat`-joined MP3s put the second
/// file's tags between audio frames. Each is cleaned under strict, share and location with nothing planted left,
/// the coded content the same by ffmpeg, and a second scan clean.
final class NestedStreamTests: XCTestCase {
    let dir = TempDir()
    static let policies = ["strict", "share", "location"]

    // MARK: Motion-JPEG samples

    static let timelapses = ["video/timelapse-mjpeg.mov", "video/timelapse-mjpeg.mkv", "mp4/timelapse-mjpeg.mp4"]
    static let timelapseCanaries = ["CANARY-TL-ARTIST", "CANARY-TL-SERIAL", "CANARY-TL-XMP-CREATOR", "CANARY-TL-CITY", "CANARY-TL-COMMENT"]

    func testScanListsEachKindOfSegmentOnceWithItsCount() {
        for name in Self.timelapses {
            let container = name.hasSuffix(".mkv") ? "matroska" : "mp4"
            let findings = Run.scan(Fixture.path(name)).findings.filter { $0.item.key.hasPrefix("\(container):mjpeg/") }
            XCTAssertEqual(Set(findings.map(\.item.key)), Set(["exif", "xmp", "iptc", "comment-position"].map { "\(container):mjpeg/\($0)" }), name)
            for finding in findings {
                XCTAssertEqual(finding.item.category, .location, "\(name): \(finding.item.key)")
                XCTAssertTrue(finding.item.detail?.contains("×8 (first:") ?? false, "\(name): \(finding.item.detail ?? "")")
            }
        }
    }

    func testEveryFrameLosesItsPhotoMetadataUnderEveryPolicy() throws {
        try Tool.require("ffmpeg", "exiftool")
        for name in Self.timelapses {
            let input = Fixture.path(name)
            for canary in Self.timelapseCanaries { XCTAssertTrue(Oracle.contains(input, canary), "\(name): fixture lacks \(canary)") }
            XCTAssertFalse(Self.frameTags(input, in: dir.file("in")).isEmpty, "\(name): ExifTool sees nothing in the original frames")
            let frames = VideoOracle.frames(input)
            XCTAssertEqual(frames?.count, 8, name)
            for policy in Self.policies {
                let output = dir.file("\(policy)-\((name as NSString).lastPathComponent)")
                let report = Run.clean(input, to: output, policy: policy)
                XCTAssertEqual(report.status, .cleaned, "\(name) \(policy): \(report.error?.message ?? "")")
                for canary in Self.timelapseCanaries { XCTAssertFalse(Oracle.contains(output, canary), "\(name) \(policy): \(canary) left") }
                XCTAssertEqual(Self.frameTags(output, in: dir.file("\(policy)-frames-\(name.hasSuffix(".mkv"))")), [],
                               "\(name) \(policy): ExifTool still reads photo metadata in a frame")
                XCTAssertEqual(Self.packets(output, "0:v").map(\.size), Self.packets(input, "0:v").map(\.size),
                               "\(name) \(policy): segments are blanked in place, no sample changes size")
                XCTAssertEqual(VideoOracle.frames(output), frames, "\(name) \(policy): decoded frames changed")
                XCTAssertEqual(Run.scan(output, policy: policy).status, .clean, "\(name) \(policy): not a fixed point")
            }
        }
    }

    /// The photo metadata ExifTool reads in each frame, taken out of the movie with `-c:v copy`.
    static func frameTags(_ movie: String, in folder: String) -> [String] {
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        Tool.run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", movie, "-map", "0:v", "-c:v", "copy", "-f", "image2", folder + "/f%02d.jpg"])
        let wanted = ["GPSLatitude", "GPSLongitude", "Artist", "SerialNumber", "Creator", "City", "Comment", "Make"]
        var found: Set<String> = []
        for frame in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
            for (key, value) in Oracle.exiftool(folder + "/" + frame) where wanted.contains(where: { key.hasSuffix(":" + $0) }) {
                // A blanked comment is still a (zero-filled) COM segment: ExifTool names it with no text.
                if let text = value as? String, text.trimmingCharacters(in: CharacterSet(charactersIn: "\0 .")).isEmpty { continue }
                found.insert(key)
            }
        }
        return found.sorted()
    }

    // MARK: Tags between MP3 frames

    static let joined: [(name: String, canaries: [String])] = [
        ("audio/joined.mp3", ["CANARY-J1-ARTIST", "CANARY-J1-TITLE", "CANARY-J2-ARTIST", "CANARY-J2-COMMENT"]),
        ("audio/joined-ape-lyrics.mp3", ["CANARY-J1-ARTIST", "CANARY-JT-APE-ARTIST", "CANARY-JT-LYRICS3", "CANARY-JT-V1A", "CANARY-J2-ARTIST",
                                         "CANARY-J2-COMMENT"]),
        ("audio/frames-unknown.mp3", ["CANARY-J2-ARTIST", "CANARY-JUNK-OWNER"]),
    ]

    func testTagsBetweenFramesAreItems() {
        let joined = Run.scan(Fixture.path("audio/joined.mp3")).findings.map(\.item)
        let second = joined.filter { $0.location.hasPrefix("between audio frames@") }
        XCTAssertEqual(Set(second.map(\.key)), ["id3v1:tag", "id3:tag", "id3:TPE1", "id3:TXXX", "inspect:location:coordinates"])
        XCTAssertEqual(joined.filter { $0.key == "mp3:encoder" }.count, 2, "the second file's LAME tag is an item too")
        let ape = Run.scan(Fixture.path("audio/joined-ape-lyrics.mp3")).findings.map(\.item.key)
        for key in ["ape:tag", "ape:Artist", "lyrics3:tag", "id3v1:tag", "id3:tag"] { XCTAssertTrue(ape.contains(key), key) }
        let unknown = Run.scan(Fixture.path("audio/frames-unknown.mp3")).findings.map(\.item).filter { $0.key == "mp3:unknown" }
        XCTAssertEqual(unknown.count, 1)
        XCTAssertTrue(unknown.first?.isUnknown ?? false)
    }

    func testTagsBetweenFramesGoUnderEveryPolicyAndEveryFrameStays() throws {
        try Tool.require("ffmpeg", "exiftool")
        for (name, canaries) in Self.joined {
            let input = Fixture.path(name)
            let before = Self.packets(input)
            XCTAssertGreaterThan(before.count, 20, name)
            for policy in Self.policies {
                let output = dir.file("\(policy)-\((name as NSString).lastPathComponent)")
                let report = Run.clean(input, to: output, policy: policy)
                XCTAssertEqual(report.status, .cleaned, "\(name) \(policy): \(report.error?.message ?? "")")
                // Under location, names and titles are kept by the policy; positions and unknown bytes never are.
                let planted = policy == "location" ? ["48.8584", "CANARY-JUNK-OWNER", "CANARY-J2-COMMENT"] : canaries + ["48.8584"]
                for canary in planted { XCTAssertFalse(Oracle.contains(output, canary), "\(name) \(policy): \(canary) left") }
                if policy == "strict" { XCTAssertEqual(Oracle.audioResidual(output), [], "\(name): ExifTool still sees tags") }
                // ffmpeg's demuxer finds the same frames at the same times; a frame it read together with the bytes
                // after it (a tag, unknown data) is that frame alone now.
                let after = Self.packets(output)
                XCTAssertEqual(after.map(\.pts), before.map(\.pts), "\(name) \(policy): frames differ")
                for (a, b) in zip(before, after) where a.md5 != b.md5 {
                    XCTAssertLessThanOrEqual(b.size, a.size, "\(name) \(policy): a frame at \(a.pts) grew")
                }
                XCTAssertLessThanOrEqual(zip(before, after).filter { $0.md5 != $1.md5 }.count, 3, "\(name) \(policy)")
                XCTAssertEqual(Run.scan(output, policy: policy).status, .clean, "\(name) \(policy): not a fixed point")
            }
        }
    }

    /// ffmpeg's packets of a stream, as its demuxer cuts them: time, size and MD5.
    static func packets(_ path: String, _ map: String = "0:a") -> [(pts: String, size: Int, md5: String)] {
        let r = Tool.run(["ffmpeg", "-nostdin", "-v", "error", "-i", path, "-map", map, "-c", "copy", "-f", "framemd5", "-"])
        return String(decoding: r.stdout, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { line in
            let f = line.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            guard f.count >= 6, let size = Int(f[4]) else { return nil }
            return (f[2], size, f[5])
        }
    }

    // MARK: A FLAC behind an ID3v2 tag

    func testAFLACBehindAnID3TagIsAFLACUnderEveryPolicy() throws {
        try Tool.require("ffmpeg")
        for name in ["audio/id3-tagged.flac", "audio/id3-prefixed.flac"] {
            XCTAssertEqual(Run.scan(Fixture.path(name)).format, "flac", "\(name): detected by what follows the ID3v2 tag")
        }
        let input = Fixture.path("audio/id3-tagged.flac")
        let planted = ["CANARY-FI-ARTIST", "CANARY-FI-PLACE", "CANARY-FI-VARTIST", "CANARY-FI-VPLACE"]
        for canary in planted { XCTAssertTrue(Oracle.contains(input, canary), canary) }
        let audio = Oracle.decodedAudio(input)
        XCTAssertNotNil(audio)
        for policy in Self.policies {
            let output = dir.file("\(policy)-id3-tagged.flac")
            let report = Run.clean(input, to: output, policy: policy)
            XCTAssertEqual(report.status, .cleaned, "\(policy): \(report.error?.message ?? "")")
            XCTAssertEqual(report.format, "flac", policy)
            for canary in policy == "location" ? ["CANARY-FI-PLACE", "CANARY-FI-VPLACE", "48.8584"] : planted + ["48.8584"] {
                XCTAssertFalse(Oracle.contains(output, canary), "\(policy): \(canary) left")
            }
            if policy == "strict" { XCTAssertEqual(Oracle.audioResidual(output), [], "ExifTool still sees tags") }
            XCTAssertEqual(Oracle.decodedAudio(output), audio, "\(policy): decoded audio changed")
            let rescan = Run.scan(output, policy: policy)
            XCTAssertEqual(rescan.status, .clean, "\(policy): not a fixed point")
            XCTAssertEqual(rescan.format, "flac", policy)
        }
    }

    // MARK: Compressed ID3v2 frames

    func testCompressedID3FramesAreReadAndTheirPositionGoes() throws {
        try Tool.require("ffmpeg", "exiftool")
        for version in [3, 4] {
            let name = "audio/id3v2\(version)-compressed.mp3", input = Fixture.path(name)
            func readable(_ path: String) -> String {
                Oracle.exiftool(path).compactMap { $0.value as? String }.filter { $0.contains("CANARY-Z\(version)") }.sorted().joined(separator: "; ")
            }
            XCTAssertTrue(readable(input).contains("CANARY-Z\(version)-PLACE 48.8584"), "\(name): ExifTool does not read the compressed frames")
            let items = Run.scan(Fixture.path(name)).findings.map(\.item)
            XCTAssertTrue(items.contains { $0.key == "inspect:location:coordinates" }, "\(name): the position inside the inflated TXXX is an item")
            let audio = Oracle.decodedAudio(input)
            for policy in Self.policies {
                let output = dir.file("\(policy)-\(version).mp3")
                let report = Run.clean(input, to: output, policy: policy)
                XCTAssertEqual(report.status, .cleaned, "\(name) \(policy): \(report.error?.message ?? "")")
                let left = readable(output)
                XCTAssertFalse(left.contains("48.8584") || left.contains("PLACE"), "\(name) \(policy): \(left)")
                if policy != "location" { XCTAssertEqual(left, "", "\(name) \(policy)") }
                XCTAssertEqual(Oracle.decodedAudio(output), audio, "\(name) \(policy): decoded audio changed")
                XCTAssertEqual(Run.scan(output, policy: policy).status, .clean, "\(name) \(policy): not a fixed point")
            }
        }
    }
}
