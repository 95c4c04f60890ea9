// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubCore
@testable import MetascrubFormats
import XCTest

/// Issue 23, item 3: kept embedded files are cleaned inside. Cover art in ID3 APIC, MP4 covr, FLAC PICTURE, Ogg
/// METADATA_BLOCK_PICTURE and a Matroska AttachedFile, and a JPEG appended after EOI, each carrying EXIF Make, Model, a serial, an artist and GPS
/// (`scripts/fixtures/parts/60-embedded.sh`). Judged by exiftool on the extracted cover, ImageMagick on its
/// pixels and ffmpeg's framemd5 on the audio.
final class EmbeddedFileTests: XCTestCase {
    static let fixtures = ["embedded/cover.mp3", "embedded/cover.m4a", "embedded/cover.flac", "embedded/cover.opus", "embedded/cover.mka",
                           "embedded/appended.jpg"]
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

    /// A cover's description is free text: `share` (which removes content) keeps the cover but not its description,
    /// `location` keeps both (the text holds no position); ExifTool still finds the picture.
    func testShareKeepsCoversWithoutTheirDescription() throws {
        try Tool.require("exiftool")
        for (fixture, canary) in [("audio/blocks.flac", "CANARY-FLAC-PICDESC"), ("audio/id3v23.mp3", "CANARY-ID3-PICDESC")] {
            let dir = TempDir()
            let input = Fixture.path(fixture)
            XCTAssertTrue(Oracle.contains(input, canary), "\(fixture): fixture without its description canary")
            for (policy, kept) in [("share", false), ("location", true)] {
                let output = dir.file("\(policy)." + (fixture as NSString).pathExtension)
                XCTAssertEqual(Run.clean(input, to: output, policy: policy).status, .cleaned, "\(policy) \(fixture)")
                XCTAssertEqual(Oracle.contains(output, canary), kept, "\(policy) \(fixture): description")
                let tags = String(decoding: Tool.run(["exiftool", "-j", "-a", "-G1", output]).stdout, as: UTF8.self)
                XCTAssertTrue(tags.contains(":Picture\""), "\(policy) \(fixture): ExifTool finds no picture")
                XCTAssertEqual(FileProcessorCheck.scan(output, policy: Run.policy(policy)).status, .clean, "\(policy) \(fixture): not a fixed point")
            }
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

    /// A video Matroska (H.264 + PCM, CRC-32 in every level-1 element) whose cover attachment carries GPS and an
    /// artist, beside a font attachment: under the keep-covers policy the cover stays, cleaned in place (the
    /// Attachments CRC recomputed, no byte position moved), and every video and audio frame decodes the same.
    func testMatroskaCoverAttachmentIsCleanedInPlaceAndFramesStayIdentical() throws {
        try Tool.require("exiftool", "ffmpeg", "ffprobe", "convert", "python3")
        let dir = TempDir()
        let input = Fixture.path("video/tags.mkv"), output = dir.file("out.mkv")
        XCTAssertTrue(Oracle.contains(input, "CANARY-COVER-ARTIST"))
        let report = Run.clean(input, to: output, policy: Self.keepCovers)
        XCTAssertEqual(report.status, .cleaned, "\(String(describing: report.error))")
        XCTAssertTrue(report.findings.contains { $0.item.key == "matroska:attachment" && $0.outcome == .cleaned && $0.item.embeddedFormat == "jpeg" })
        XCTAssertFalse(Oracle.contains(output, "CANARY-COVER-ARTIST"))
        XCTAssertEqual(FileManager.default.contents(atPath: output)?.count, FileManager.default.contents(atPath: input)?.count, "a byte position moved")
        XCTAssertNotNil(VideoOracle.frames(output))
        XCTAssertEqual(VideoOracle.frames(output), VideoOracle.frames(input), "video or audio frames changed")
        // Every level-1 element's CRC-32 holds (ffmpeg does not check the Attachments one, so zlib does).
        let crcs = Self.levelOneCRCs(output)
        XCTAssertTrue(crcs.contains("1941a469:ok"), crcs)
        XCTAssertFalse(crcs.contains("bad"), crcs)
        let before = try attachedPicture(input, dir, "before.jpg"), after = try attachedPicture(output, dir, "after.jpg")
        XCTAssertNotNil(Oracle.pixels(after, autoOrient: false))
        XCTAssertEqual(Oracle.pixels(after, autoOrient: false), Oracle.pixels(before, autoOrient: false), "cover pixels changed")
        XCTAssertNotNil(exiftoolEmbedded(before)["GPS:GPSLatitude"])
        let tags = exiftoolEmbedded(after)
        XCTAssertFalse(tags.keys.contains { $0.contains("GPS") || $0.hasSuffix(":Artist") }, "\(tags.keys.sorted())")
        XCTAssertEqual(FileProcessorCheck.scan(output, policy: Self.keepCovers).status, .clean)
        let again = dir.file("again.mkv")
        XCTAssertEqual(Run.clean(output, to: again, policy: Self.keepCovers).status, .clean)
        if FileManager.default.fileExists(atPath: again) {
            XCTAssertEqual(FileManager.default.contents(atPath: again), FileManager.default.contents(atPath: output))
        }
    }

    /// `share` bakes orientation, but a turned cover can come out larger than the attachment it is written back
    /// into: its Orientation stays (with the reason), its GPS goes, and the clean is a fixed point.
    func testMatroskaCoverWithAnOrientationIsCleanedUnderShareWithoutBeingTurned() throws {
        try Tool.require("exiftool", "ffmpeg", "ffprobe", "convert", "python3")
        let dir = TempDir()
        let cover = dir.file("c.jpg"), input = dir.file("in.mka"), output = dir.file("out.mka")
        XCTAssertEqual(Tool.run(["convert", "-size", "40x24", "gradient:red-blue", "-quality", "90", cover]).status, 0)
        XCTAssertEqual(Tool.run(["exiftool", "-q", "-overwrite_original", "-n", "-IFD0:Orientation=6", "-GPSLatitude=48.8584", "-GPSLatitudeRef=N", cover]).status, 0)
        XCTAssertEqual(Tool.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "sine=duration=0.3", "-c:a", "flac", "-attach", cover,
                                 "-metadata:s:t:0", "mimetype=image/jpeg", "-metadata:s:t:0", "filename=cover.jpg", input]).status, 0)
        let report = Run.clean(input, to: output, policy: "share")
        XCTAssertEqual(report.status, .cleaned, "\(String(describing: report.error))")
        XCTAssertTrue(report.findings.contains { $0.item.key == "exif:Orientation" && $0.disposition == .keep && ($0.reason ?? "").contains("Matroska attachment") }, "\(report.findings.map { ($0.item.key, $0.disposition, $0.reason ?? "") })")
        let before = try attachedPicture(input, dir, "before.jpg"), after = try attachedPicture(output, dir, "after.jpg")
        XCTAssertEqual(Oracle.pixels(after, autoOrient: false), Oracle.pixels(before, autoOrient: false))
        XCTAssertNil(exiftoolEmbedded(after)["GPS:GPSLatitude"])
        XCTAssertEqual(exiftoolEmbedded(after)["IFD0:Orientation"] as? Int, 6)
        XCTAssertFalse(Self.levelOneCRCs(output).contains("bad"))
        XCTAssertEqual(FileProcessorCheck.scan(output, policy: Run.policy("share")).status, .clean)
    }

    /// The FileData rewritten in place: a Void over what the cleaned file freed, or a size field one byte longer
    /// when only one byte is left over (no Void is that small); never longer than the element was.
    func testMatroskaFileDataKeepsItsLengthWhateverTheCleanedSize() throws {
        var layout = MatroskaLayout()
        layout.attachmentData[0] = (100..<(100 + 3 + 20), 3)  // ID 46 5C, a 1-byte size, 20 bytes of data
        for n in 0...20 {
            let (offset, bytes) = try layout.fileData(0, picture: [UInt8](repeating: 0xAB, count: n), location: "t")
            XCTAssertEqual(offset, 100)
            XCTAssertEqual(bytes.count, 23, "\(n) bytes")
            XCTAssertEqual(Array(bytes.prefix(2)), [0x46, 0x5C])
            let source = MemoryByteSource(bytes)
            let element = try EBML.header(source, at: 0, limit: 23, path: "t")
            XCTAssertEqual(element.dataSize, Int64(n))
            if element.end < 23 {
                let void = try EBML.header(source, at: element.end, limit: 23, path: "t")
                XCTAssertEqual(void.id, 0xEC)
                XCTAssertEqual(void.end, 23)
            }
        }
        XCTAssertThrowsError(try layout.fileData(0, picture: [UInt8](repeating: 0, count: 21), location: "t"))
    }

    /// "id:ok" or "id:bad" for each level-1 element of the Segment that starts with a CRC-32, checked by zlib.
    static func levelOneCRCs(_ path: String) -> String {
        let script = """
            import sys, zlib
            d = open(sys.argv[1], 'rb').read()
            def num(p, strip):
                b, n = d[p], 1
                while not b & (0x80 >> (n - 1)): n += 1
                v = b & (0xFF >> n) if strip else b
                for i in range(1, n): v = (v << 8) | d[p + i]
                return v, n
            p = 0
            for level in range(2):
                i, n = num(p, False); s, m = num(p + n, True)
                p += n + m + (s if level == 0 else 0)
            out = []
            while p < len(d):
                i, n = num(p, False); s, m = num(p + n, True); start = p + n + m; end = start + s
                if d[start] == 0xBF and d[start + 1] == 0x84:
                    ok = zlib.crc32(d[start + 6:end]) == int.from_bytes(d[start + 2:start + 6], 'little')
                    out.append('%x:%s' % (i, 'ok' if ok else 'bad'))
                p = end
            print(' '.join(out))
            """
        let r = Tool.run(["python3", "-c", script, path])
        return r.status == 0 ? String(decoding: r.stdout, as: UTF8.self) : "python3 failed: bad"
    }

    /// The attached picture (the cover attachment ffmpeg exposes as a video stream) copied out as it is stored.
    private func attachedPicture(_ path: String, _ dir: TempDir, _ name: String) throws -> String {
        let probe = Tool.run(["ffprobe", "-v", "error", "-show_entries", "stream=index:stream_disposition=attached_pic", "-of", "csv=p=0", path])
        let index = try XCTUnwrap(String(decoding: probe.stdout, as: UTF8.self).split(separator: "\n")
            .map { $0.split(separator: ",") }.first { $0.count == 2 && $0[1] == "1" }?[0], "\(path): no attached picture")
        let r = Tool.run(["ffmpeg", "-v", "error", "-y", "-i", path, "-map", "0:\(index)", "-c", "copy", "-frames:v", "1", "-f", "image2", dir.file(name)])
        XCTAssertEqual(r.status, 0, r.stderr)
        return dir.file(name)
    }

    private func placedJPEG(_ path: String, _ dir: TempDir, _ name: String) throws -> String {
        let bytes = [UInt8](FileManager.default.contents(atPath: path)!)
        let soi = try XCTUnwrap((0..<bytes.count - 3).first { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xD8 && bytes[$0 + 2] == 0xFF })
        let eoi = try XCTUnwrap((soi..<bytes.count - 1).last { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xD9 })
        FileManager.default.createFile(atPath: dir.file(name), contents: Data(bytes[soi...eoi + 1]))
        return dir.file(name)
    }

    /// The issue's keep-covers policy (`embedded: keep`, everything else as `location`): every fixture of every
    /// format cleans to a fixed point under it (scan after clean finds nothing; a second clean changes no byte).
    func testEveryFixtureUnderAKeepCoversPolicyIsAFixedPoint() throws {
        let location = try XCTUnwrap(PolicyCatalog.source(of: "location"))
        let policy = try PolicyLoader.load(yaml: location.replacingOccurrences(of: "embedded: clean", with: "embedded: keep")
            .replacingOccurrences(of: "name: location", with: "name: keep-covers"), file: "keep-covers.yaml")
        XCTAssertEqual(policy.categories[.embedded], .keep)
        let processor = FileProcessor(options: ProcessingOptions(policy: policy))
        let root = Fixture.root.path
        let fixtures = (FileManager.default.enumerator(atPath: root)?.allObjects as? [String] ?? []).filter { path in
            var isDir: ObjCBool = false
            FileManager.default.fileExists(atPath: root + "/" + path, isDirectory: &isDir)
            return !isDir.boolValue && !path.hasPrefix("golden") && !path.hasPrefix("fuzz") && !path.hasSuffix(".tsv") && !path.hasSuffix(".md")
        }.sorted()
        XCTAssertGreaterThan(fixtures.count, 100)
        let dir = TempDir()
        var violations: [String] = [], checked = 0
        for fixture in fixtures {
            let ext = (fixture as NSString).pathExtension
            let first = dir.file("first." + ext), second = dir.file("second." + ext)
            try? FileManager.default.removeItem(atPath: first)
            try? FileManager.default.removeItem(atPath: second)
            let cleaned = processor.clean(InputFile(path: root + "/" + fixture, relative: "f." + ext), output: .file(first))
            guard cleaned.status == .cleaned || cleaned.status == .clean, FileManager.default.fileExists(atPath: first) else { continue }
            checked += 1
            let rescan = processor.scan(InputFile(path: first, relative: "first." + ext))
            if rescan.status != .clean {
                violations.append("\(fixture): scan after clean: " + rescan.actionable.map { "\($0.disposition.rawValue) \($0.item.key)" }.joined(separator: ", "))
            }
            let again = processor.clean(InputFile(path: first, relative: "first." + ext), output: .file(second))
            if again.status != .clean { violations.append("\(fixture): second clean is \(again.status.rawValue) \(again.error?.message ?? "")") }
            if FileManager.default.fileExists(atPath: second), FileManager.default.contents(atPath: second) != FileManager.default.contents(atPath: first) {
                violations.append("\(fixture): second clean changed bytes")
            }
        }
        XCTAssertGreaterThan(checked, 100)
        XCTAssertEqual(violations, [], "\(violations.count) violations in \(checked) cleans")
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
