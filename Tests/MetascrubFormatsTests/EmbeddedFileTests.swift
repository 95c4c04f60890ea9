// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubCore
import XCTest

/// Issue 23, item 3: kept embedded files are cleaned inside. Cover art in ID3 APIC, MP4 covr and FLAC PICTURE,
/// and a JPEG appended after EOI, each carrying EXIF Make, Model, a serial, an artist and GPS
/// (`scripts/fixtures/parts/60-embedded.sh`). Judged by exiftool on the extracted cover, ImageMagick on its
/// pixels and ffmpeg's framemd5 on the audio.
final class EmbeddedFileTests: XCTestCase {
    static let fixtures = ["embedded/cover.mp3", "embedded/cover.m4a", "embedded/cover.flac", "embedded/appended.jpg"]
    static let canaries = ["CanaryMake", "CanaryModel X1", "CANARY-SERIAL-7731", "CANARY-COVER-ARTIST"]

    /// As strict, but the covers stay (cleaned inside by the same rules).
    static let keepCovers = try! PolicyLoader.load(yaml: """
        schema: 1
        name: keep-covers
        default: remove
        unknown: remove
        categories:
          embedded: keep
          rendering: keep
          structure: keep
        keys:
          "exif:*": remove
          "xmp:*": remove
          "photoshop:*": remove
          "iptc:*": remove
        orientation: keep

        """, file: "keep-covers.yaml")

    /// The embedded JPEG's bytes: the attached picture as ffmpeg copies it out, or what follows the first EOI.
    private func cover(of path: String, into dir: TempDir, _ name: String) throws -> String {
        let out = dir.file(name)
        if path.hasSuffix(".jpg") {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            let split = try XCTUnwrap((2..<bytes.count - 4).first { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xD9 && bytes[$0 + 2] == 0xFF && bytes[$0 + 3] == 0xD8 })
            try Data(bytes[(split + 2)...]).write(to: URL(fileURLWithPath: out))
        } else {
            let r = Tool.run(["ffmpeg", "-v", "error", "-y", "-i", path, "-an", "-map", "0:v", "-c:v", "copy", "-frames:v", "1", "-f", "image2", out])
            XCTAssertEqual(r.status, 0, "\(path): no cover to extract: \(r.stderr)")
        }
        return out
    }

    private func exiftoolEmbedded(_ path: String) -> [String: Any] {
        let r = Tool.run(["exiftool", "-j", "-a", "-G1", "-ee", "-n", path])
        return ((try? JSONSerialization.jsonObject(with: r.stdout) as? [[String: Any]])?.first) ?? [:]
    }

    func testKeepCoversPolicyKeepsEachCoverDecodingAndCleansItInside() throws {
        try Tool.require("exiftool", "ffmpeg", "convert")
        for fixture in Self.fixtures {
            let dir = TempDir()
            let original = Fixture.path(fixture)
            let output = dir.file("out." + (fixture as NSString).pathExtension)

            // The scan itemises the cover's own metadata under the cover's location.
            let scan = Run.scan(original, policy: "strict")
            XCTAssertTrue(scan.findings.contains { $0.item.key == "exif:GPSLatitude" && $0.item.location.contains(" > ") }, "\(fixture): no nested GPS item")

            let report = Run.clean(original, to: output, policy: Self.keepCovers)
            XCTAssertEqual(report.status, .cleaned, "\(fixture): \(String(describing: report.error))")
            XCTAssertTrue(report.findings.contains { $0.outcome == .cleaned && $0.item.embeddedFormat == "jpeg" }, "\(fixture): no cover cleaned")
            for canary in Self.canaries {
                XCTAssertFalse(Oracle.contains(output, canary), "\(fixture): \(canary) survived")
            }
            // The cover is still there and decodes to the same pixels; exiftool sees nothing identifying in it.
            let before = try cover(of: original, into: dir, "before.jpg"), after = try cover(of: output, into: dir, "after.jpg")
            XCTAssertNotNil(Oracle.pixels(after, autoOrient: false), fixture)
            XCTAssertEqual(Oracle.pixels(after, autoOrient: false), Oracle.pixels(before, autoOrient: false), "\(fixture): cover pixels changed")
            let tags = exiftoolEmbedded(after)
            for (key, value) in tags {
                XCTAssertFalse(key.contains("GPS") || key.hasSuffix(":SerialNumber") || key.hasSuffix(":Artist") || key.hasSuffix(":Make"),
                               "\(fixture): the cover still has \(key)")
                XCTAssertFalse(Self.canaries.contains { "\(value)".contains($0) }, "\(fixture): the cover still has \(key)")
            }
            XCTAssertFalse(exiftoolEmbedded(output).keys.contains { $0.contains("GPS") }, "\(fixture): exiftool -ee still sees GPS")
            if !fixture.hasSuffix(".jpg") {
                XCTAssertNotNil(Oracle.decodedAudio(output), fixture)
                XCTAssertEqual(Oracle.decodedAudio(output), Oracle.decodedAudio(original), "\(fixture): audio changed")
            } else {
                XCTAssertEqual(Oracle.pixels(output, autoOrient: false), Oracle.pixels(original, autoOrient: false), "\(fixture): primary changed")
            }
            // Fixed point: the output scans clean, and a second clean changes no byte.
            let rescan = FileProcessorCheck.scan(output, policy: Self.keepCovers)
            XCTAssertEqual(rescan.status, .clean, "\(fixture): \(rescan.actionable.map(\.item.key))")
            let again = dir.file("again." + (fixture as NSString).pathExtension)
            let second = Run.clean(output, to: again, policy: Self.keepCovers)
            XCTAssertEqual(second.status, .clean, fixture)
            if FileManager.default.fileExists(atPath: again) {
                XCTAssertEqual(FileManager.default.contents(atPath: again), FileManager.default.contents(atPath: output), fixture)
            }
        }
    }

    func testShippedLocationKeepsCoversWithoutTheirPosition() throws {
        try Tool.require("exiftool", "ffmpeg", "convert")
        for fixture in Self.fixtures {
            let dir = TempDir()
            let original = Fixture.path(fixture)
            let output = dir.file("out." + (fixture as NSString).pathExtension)
            let report = Run.clean(original, to: output, policy: "location")
            XCTAssertEqual(report.status, .cleaned, "\(fixture): \(String(describing: report.error))")
            let before = try cover(of: original, into: dir, "before.jpg"), after = try cover(of: output, into: dir, "after.jpg")
            XCTAssertEqual(Oracle.pixels(after, autoOrient: false), Oracle.pixels(before, autoOrient: false), "\(fixture): cover pixels changed")
            let tags = exiftoolEmbedded(after)
            XCTAssertFalse(tags.keys.contains { $0.contains("GPS") }, "\(fixture): the cover still has a position")
            // `location` keeps the camera and the author, inside the cover as in the file.
            XCTAssertEqual(tags["IFD0:Make"] as? String, "CanaryMake", fixture)
            XCTAssertEqual(FileProcessorCheck.scan(output, policy: Run.policy("location")).status, .clean, fixture)
        }
    }

    func testStrictStillRemovesCovers() throws {
        try Tool.require("ffmpeg")
        for fixture in Self.fixtures {
            let dir = TempDir()
            let output = dir.file("out." + (fixture as NSString).pathExtension)
            let report = Run.clean(Fixture.path(fixture), to: output, policy: "strict")
            XCTAssertEqual(report.status, .cleaned, fixture)
            for canary in Self.canaries { XCTAssertFalse(Oracle.contains(output, canary), "\(fixture): \(canary) survived") }
            if fixture.hasSuffix(".jpg") {
                let bytes = FileManager.default.contents(atPath: output) ?? Data()
                XCTAssertNil(bytes.range(of: Data([0xFF, 0xD9, 0xFF, 0xD8])), "\(fixture): the appended JPEG survived strict")
            } else {
                let r = Tool.run(["ffprobe", "-v", "error", "-select_streams", "v", "-show_entries", "stream=index", "-of", "csv=p=0", output])
                XCTAssertEqual(String(decoding: r.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines), "", "\(fixture): cover kept under strict")
            }
        }
    }

    /// Issue 23, item 4: a smart object's JPEG under a policy that keeps embedded files but removes location
    /// used to keep its APP1 (and the GPS in it); now its own items are decided and its metadata segments blanked.
    func testSmartObjectJPEGLosesItsPositionUnderAPolicyThatKeepsEmbeddedFiles() throws {
        try Tool.require("exiftool", "convert")
        let policy = try PolicyLoader.load(yaml: "schema: 1\nname: k\ndefault: keep\nunknown: remove\ncategories:\n  location: remove\n  embedded: keep\norientation: keep\n",
                                           file: "k.yaml")
        let dir = TempDir()
        let input = Fixture.path("psd/smart-object.psd"), output = dir.file("out.psd")
        let scan = FileProcessorCheck.scan(input, policy: policy)
        XCTAssertTrue(scan.findings.contains { $0.item.key == "exif:GPSLatitude" && $0.item.location.hasPrefix("layer and mask/document/lnk2/#0 > ") && $0.disposition == .remove },
                      "\(scan.findings.map { ($0.item.key, $0.item.location, $0.disposition) })")
        let report = Run.clean(input, to: output, policy: policy)
        XCTAssertEqual(report.status, .cleaned, "\(String(describing: report.error))")
        let (before, after) = (try placedJPEG(input, dir, "a.jpg"), try placedJPEG(output, dir, "b.jpg"))
        XCTAssertNotNil(Oracle.exiftool(before)["GPS:GPSLatitude"])
        XCTAssertNil(Oracle.exiftool(after)["GPS:GPSLatitude"])
        XCTAssertEqual(Oracle.pixels(after, autoOrient: false), Oracle.pixels(before, autoOrient: false))
        XCTAssertEqual(FileProcessorCheck.scan(output, policy: policy).status, .clean)
        XCTAssertEqual(Run.clean(output, to: dir.file("again.psd"), policy: policy).status, .clean)
    }

    /// A smart object embedding a PNG with GPS: no segments to blank in place, so its data goes whole (zeros).
    func testSmartObjectPNGHoldingAPositionIsZeroedInPlace() throws {
        try Tool.require("convert")
        for policy in ["strict", "location"] {
            let dir = TempDir()
            let input = Fixture.path("embedded/smart-object-png.psd"), output = dir.file("out.psd")
            XCTAssertTrue(Oracle.contains(input, "CANARY-PLACED-PNG-ARTIST"))
            let report = Run.clean(input, to: output, policy: policy)
            XCTAssertEqual(report.status, .cleaned, "\(policy): \(String(describing: report.error))")
            XCTAssertFalse(Oracle.contains(output, "CANARY-PLACED-PNG-ARTIST"), policy)
            XCTAssertFalse(Oracle.contains(output, "CANARY-SERIAL-7731"), policy)
            XCTAssertEqual(FileManager.default.contents(atPath: output)?.count, FileManager.default.contents(atPath: input)?.count, policy)
            XCTAssertEqual(Oracle.pixels("\(output)[0]", autoOrient: false), Oracle.pixels("\(input)[0]", autoOrient: false), policy)
            XCTAssertEqual(Run.clean(output, to: dir.file("again.psd"), policy: policy).status, .clean, "\(policy): not a fixed point")
        }
    }

    private func placedJPEG(_ path: String, _ dir: TempDir, _ name: String) throws -> String {
        let bytes = [UInt8](FileManager.default.contents(atPath: path)!)
        let soi = try XCTUnwrap((0..<bytes.count - 3).first { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xD8 && bytes[$0 + 2] == 0xFF })
        let eoi = try XCTUnwrap((soi..<bytes.count - 1).last { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xD9 })
        FileManager.default.createFile(atPath: dir.file(name), contents: Data(bytes[soi...eoi + 1]))
        return dir.file(name)
    }

    func testUncleanableFailRefusesAFileWhoseEmbeddedItemCannotBeCleaned() throws {
        // gps-full.jpg carries an EXIF thumbnail, which is no file metascrub looks into.
        let policy = try PolicyLoader.load(yaml: "schema: 1\nname: u\ndefault: keep\ncategories:\n  embedded: clean\nuncleanable: fail\n", file: "u.yaml")
        let dir = TempDir()
        let report = Run.clean(Fixture.path("jpeg/gps-full.jpg"), to: dir.file("out.jpg"), policy: policy)
        XCTAssertEqual(report.status, .error)
        XCTAssertEqual(report.error?.code, "policy-violation")
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.file("out.jpg")))
    }
}

/// Scans with any policy, as the CLI does.
enum FileProcessorCheck {
    static func scan(_ path: String, policy: Policy) -> FileReport {
        FileProcessor(options: ProcessingOptions(policy: policy))
            .scan(InputFile(path: path, relative: (path as NSString).lastPathComponent))
    }
}
