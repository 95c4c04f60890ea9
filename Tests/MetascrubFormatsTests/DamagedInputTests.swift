// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubCore
import XCTest

/// Issue 18 §1: files damaged where no metadata can sit (cut inside the sample data, stubs whose sample data was
/// trimmed) are cleaned with a `damaged-input` warning and their damaged remainder copied byte for byte;
/// `damaged: refuse` restores the refusal; damage where metadata could sit is refused either way.
final class DamagedInputTests: XCTestCase {
    override func setUpWithError() throws {
        try Tool.require("exiftool")
    }

    static let movies = ["damaged/cut-in-mdat.mp4", "damaged/empty-mdat.mp4"]
    static let all = movies + ["damaged/cut-in-data.wav", "damaged/cut-last-page.ogg", "damaged/garbage-after-image.webp",
                                  "damaged/cut-in-movi.avi", "damaged/cut-in-data.wmv", "damaged/header-only.wmv",
                                  "damaged/cut-in-image.heic"]

    func testDamagedMoviesAreCleanedWithAWarningAndNothingLeft() throws {
        let tmp = TempDir()
        for relative in Self.movies {
            let input = Fixture.path(relative), output = tmp.file((relative as NSString).lastPathComponent)
            let report = Run.clean(input, to: output)
            XCTAssertEqual(report.status, .cleaned, "\(relative): \(report.error?.message ?? "")")
            XCTAssertEqual(report.verification?.contentResult, .passed, relative)
            let notes = report.notes.filter { $0.code == "damaged-input" }
            XCTAssertFalse(notes.isEmpty, "\(relative): no damaged-input note")
            XCTAssertTrue(notes.allSatisfy { $0.severity == .warning && $0.offset != nil }, "\(relative): \(notes)")
            XCTAssertEqual(VideoOracle.residual(output, allowed: MP4Tests.allowed), [], "\(relative): ExifTool still sees metadata")
            for canary in ContainerChecks.canaries(relative) + ["x264 - core"] {
                XCTAssertFalse(Oracle.contains(output, canary), "\(relative): \(canary) left in the output")
            }
        }
    }

    /// The cut sample data after the neutralised encoder SEI is the same bytes in both files, up to the end.
    func testTheDamagedRemainderIsCopiedByteForByte() throws {
        let tmp = TempDir()
        let input = Fixture.path("damaged/cut-in-mdat.mp4"), output = tmp.file("cut.mp4")
        XCTAssertEqual(Run.clean(input, to: output).status, .cleaned)
        let before = try [UInt8](Data(contentsOf: URL(fileURLWithPath: input)))
        let after = try [UInt8](Data(contentsOf: URL(fileURLWithPath: output)))
        guard let inMdat = Self.lastBox(before, "mdat"), let outMdat = Self.lastBox(after, "mdat") else {
            return XCTFail("no mdat at the end of the files")
        }
        // Skip the first access unit's SEI (neutralised in place): compare from the end of the x264 string on.
        let marker = Array("x264 - core".utf8)
        guard let sei = Self.find(marker, in: before, from: inMdat), let seiEnd = before[sei...].firstIndex(of: 0) else {
            return XCTFail("fixture has no x264 SEI in its sample data")
        }
        let skip = seiEnd + 1 - inMdat
        XCTAssertGreaterThan(before.count - seiEnd, 100, "nothing left to compare")
        XCTAssertEqual(before.count - inMdat, after.count - outMdat, "the sample data changed length")
        XCTAssertEqual(Array(before[(seiEnd + 1)...]), Array(after[(outMdat + skip)...]), "the damaged remainder differs")
    }

    /// A WAV cut inside its data chunk: every metadata chunk gone (ExifTool), the form size fits the output, and
    /// the samples that are there are the same bytes up to the end.
    func testWAVCutInsideItsDataIsCleanedAndTheSamplesCopied() throws {
        let tmp = TempDir()
        let relative = "damaged/cut-in-data.wav", input = Fixture.path(relative), output = tmp.file("cut.wav")
        let report = Run.clean(input, to: output)
        XCTAssertEqual(report.status, .cleaned, report.error?.message ?? "")
        XCTAssertEqual(report.notes.filter { $0.code == "damaged-input" && $0.severity == .warning }.count, 1, "\(report.notes)")
        XCTAssertEqual(Oracle.audioResidual(output), [], "ExifTool still sees metadata")
        for canary in ContainerChecks.canaries(relative) {
            XCTAssertFalse(Oracle.contains(output, canary), "\(canary) left in the output")
        }
        let before = try [UInt8](Data(contentsOf: URL(fileURLWithPath: input)))
        let after = try [UInt8](Data(contentsOf: URL(fileURLWithPath: output)))
        XCTAssertEqual(Int(after[4]) | Int(after[5]) << 8 | Int(after[6]) << 16 | Int(after[7]) << 24, after.count - 8, "RIFF size")
        guard let dataIn = Self.find(Array("data".utf8), in: before, from: 12), let dataOut = Self.find(Array("data".utf8), in: after, from: 12) else {
            return XCTFail("no data chunk")
        }
        XCTAssertEqual(Array(before[dataIn...]), Array(after[dataOut...]), "the cut sample data differs")
        var policy = Run.policy("strict")
        policy.damaged = .refuse
        XCTAssertEqual(Run.clean(input, to: tmp.file("refused.wav"), policy: policy).status, .error)
    }

    /// An Ogg cut inside its last audio page: the comment header rebuilt, the cut page copied as it is.
    func testOggCutInsideItsLastPageIsCleaned() throws {
        let tmp = TempDir()
        let relative = "damaged/cut-last-page.ogg", input = Fixture.path(relative), output = tmp.file("cut.ogg")
        let report = Run.clean(input, to: output)
        XCTAssertEqual(report.status, .cleaned, report.error?.message ?? "")
        XCTAssertEqual(report.verification?.contentResult, .passed)
        XCTAssertEqual(report.notes.filter { $0.code == "damaged-input" && $0.severity == .warning }.count, 1, "\(report.notes)")
        XCTAssertEqual(Oracle.audioResidual(output), [], "ExifTool still sees metadata")
        for canary in ContainerChecks.canaries(relative) {
            XCTAssertFalse(Oracle.contains(output, canary), "\(canary) left in the output")
        }
        let before = try [UInt8](Data(contentsOf: URL(fileURLWithPath: input)))
        let after = try [UInt8](Data(contentsOf: URL(fileURLWithPath: output)))
        // The cut page: from its capture pattern to the end, the same bytes.
        let pattern = Array("OggS".utf8)
        let lastIn = (0...(before.count - 4)).last { before[$0..<$0 + 4].elementsEqual(pattern) }!
        let lastOut = (0...(after.count - 4)).last { after[$0..<$0 + 4].elementsEqual(pattern) }!
        XCTAssertEqual(Array(before[lastIn...]), Array(after[lastOut...]), "the cut page differs")
    }

    /// A WebP with bytes that are no chunk after its image: they end the form and go as trailing data; the
    /// image is the same bytes and the same pixels.
    func testWebPGarbageAfterTheImageIsRemoved() throws {
        try Tool.require("compare")
        let tmp = TempDir()
        let relative = "damaged/garbage-after-image.webp", input = Fixture.path(relative), output = tmp.file("garbage.webp")
        let report = Run.clean(input, to: output)
        XCTAssertEqual(report.status, .cleaned, report.error?.message ?? "")
        XCTAssertEqual(report.verification?.contentResult, .passed)
        XCTAssertEqual(report.notes.filter { $0.code == "damaged-input" && $0.severity == .warning }.count, 1, "\(report.notes)")
        XCTAssertEqual(ContainerChecks.residualTags(output), [], "ExifTool still sees metadata")
        for canary in ContainerChecks.canaries(relative) {
            XCTAssertFalse(Oracle.contains(output, canary), "\(canary) left in the output")
        }
        XCTAssertNotNil(Oracle.pixels(input, autoOrient: true))
        XCTAssertEqual(Oracle.pixels(input, autoOrient: true), Oracle.pixels(output, autoOrient: true), "displayed image changed")
        let after = try [UInt8](Data(contentsOf: URL(fileURLWithPath: output)))
        XCTAssertEqual(Int(after[4]) | Int(after[5]) << 8 | Int(after[6]) << 16 | Int(after[7]) << 24, after.count - 8, "RIFF size")
    }

    /// An AVI cut inside its movi list: metadata chunks become JUNK in place, and everything from the movi list
    /// to the cut end is the same bytes at the same offsets.
    func testAVICutInsideItsMoviListIsCleanedInPlace() throws {
        let tmp = TempDir()
        let relative = "damaged/cut-in-movi.avi", input = Fixture.path(relative), output = tmp.file("cut.avi")
        let report = Run.clean(input, to: output)
        XCTAssertEqual(report.status, .cleaned, report.error?.message ?? "")
        XCTAssertEqual(report.verification?.contentResult, .passed)
        XCTAssertFalse(report.notes.filter { $0.code == "damaged-input" && $0.severity == .warning }.isEmpty, "\(report.notes)")
        XCTAssertEqual(VideoOracle.residual(output), [], "ExifTool still sees metadata")
        for canary in ContainerChecks.canaries(relative) {
            XCTAssertFalse(Oracle.contains(output, canary), "\(canary) left in the output")
        }
        let before = try [UInt8](Data(contentsOf: URL(fileURLWithPath: input)))
        let after = try [UInt8](Data(contentsOf: URL(fileURLWithPath: output)))
        XCTAssertEqual(before.count, after.count)
        guard let movi = Self.find(Array("movi".utf8), in: before, from: 12) else { return XCTFail("no movi list") }
        XCTAssertEqual(Array(before[(movi - 8)...]), Array(after[(movi - 8)...]), "the cut movi list differs")
    }

    /// WMV cut inside its Data Object, or with no Data Object at all: the header metadata is padded out in place
    /// and every byte from the Data Object on is the same at the same offset.
    func testASFCutInsideOrBeforeItsDataObjectIsCleanedInPlace() throws {
        let tmp = TempDir()
        for relative in ["damaged/cut-in-data.wmv", "damaged/header-only.wmv"] {
            let input = Fixture.path(relative), output = tmp.file((relative as NSString).lastPathComponent)
            let report = Run.clean(input, to: output)
            XCTAssertEqual(report.status, .cleaned, "\(relative): \(report.error?.message ?? "")")
            XCTAssertEqual(report.verification?.contentResult, .passed, relative)
            XCTAssertEqual(report.notes.filter { $0.code == "damaged-input" && $0.severity == .warning }.count, 1, "\(relative): \(report.notes)")
            XCTAssertEqual(VideoOracle.residual(output), [], "\(relative): ExifTool still sees metadata")
            for canary in ContainerChecks.canaries(relative) {
                XCTAssertFalse(Oracle.contains(output, canary), "\(relative): \(canary) left in the output")
            }
            let before = try [UInt8](Data(contentsOf: URL(fileURLWithPath: input)))
            let after = try [UInt8](Data(contentsOf: URL(fileURLWithPath: output)))
            XCTAssertEqual(before.count, after.count, relative)
            let header = before[16..<24].reversed().reduce(0) { $0 << 8 | Int($1) }
            XCTAssertEqual(Array(before[header...]), Array(after[header...]), "\(relative): bytes after the header differ")
        }
    }

    /// A HEIC cut inside its coded image (an interrupted upload; Exif and XMP sit before the image in mdat, as
    /// phones write them): the metadata goes, the part of the image that is there is copied byte for byte, and the
    /// cleaned copy is a fixed point.
    func testHEICCutInsideItsImageIsCleanedAndTheImageCopied() throws {
        let tmp = TempDir()
        let relative = "damaged/cut-in-image.heic"
        let input = Fixture.path(relative), output = tmp.file("cut.heic")
        let report = Run.clean(input, to: output)
        XCTAssertEqual(report.status, .cleaned, report.error?.message ?? "")
        XCTAssertEqual(report.verification?.contentResult, .passed)
        XCTAssertTrue(report.notes.contains { $0.code == "damaged-input" && $0.message.contains("image item") }, "\(report.notes)")
        let canaries = ContainerChecks.canaries(relative)
        XCTAssertFalse(canaries.isEmpty)
        for canary in canaries { XCTAssertFalse(Oracle.contains(output, canary), "\(canary) left in the output") }
        let groups = Oracle.exiftool(output).keys.compactMap { $0.split(separator: ":").first.map(String.init) }
        XCTAssertFalse(groups.contains { ["IFD0", "ExifIFD", "GPS", "XMP-dc", "XMP-photoshop"].contains($0) }, "\(Set(groups))")
        // The coded image is the last item in both files, and the cut is inside it: the tails are the same bytes.
        let before = try [UInt8](Data(contentsOf: URL(fileURLWithPath: input)))
        let after = try [UInt8](Data(contentsOf: URL(fileURLWithPath: output)))
        XCTAssertEqual(Array(before.suffix(128)), Array(after.suffix(128)))
        let again = Run.clean(output, to: tmp.file("again.heic"))
        XCTAssertEqual(again.status, .clean, again.error?.message ?? "")
    }

    func testRefuseDamagedRestoresTheRefusal() throws {
        let tmp = TempDir()
        var policy = Run.policy("strict")
        policy.damaged = .refuse
        for relative in Self.all {
            let output = tmp.file("refused-" + (relative as NSString).lastPathComponent)
            let report = Run.clean(Fixture.path(relative), to: output, policy: policy)
            XCTAssertEqual(report.status, .error, relative)
            XCTAssertNotNil(report.error?.message.range(of: "offset"), "\(relative): \(report.error?.message ?? "")")
            XCTAssertFalse(FileManager.default.fileExists(atPath: output), relative)
        }
        let loaded = try PolicyLoader.load(yaml: "schema: 1\nname: p\ndamaged: refuse\n", file: "p.yaml")
        XCTAssertEqual(loaded.damaged, .refuse)
        XCTAssertEqual(try PolicyLoader.load(yaml: "schema: 1\nname: p\n", file: "p.yaml").damaged, .clean)
        XCTAssertThrowsError(try PolicyLoader.load(yaml: "schema: 1\nname: p\ndamaged: maybe\n", file: "p.yaml"))
    }

    /// Where metadata could sit in the damaged part, the file is still refused: a movie box cut off, a chunk
    /// of a removed telemetry track pointing outside the sample data.
    func testDamageWhereMetadataCouldSitIsRefused() {
        let tmp = TempDir()
        for relative in ["mp4/bad/truncated.mp4", "mp4/bad/chunk-outside.mp4", "mp4/bad/bad-box-size.mp4", "audio/bad/cut-in-list.wav",
                         "audio/bad/truncated-header.ogg", "video/bad/truncated.avi",
                         "video/bad/truncated.wmv", "damaged/cut-in-xmp.heic"] {
            ContainerChecks.assertRefused(relative, in: tmp)
        }
    }

    /// Offset just past the header of the last top-level box of `type`, walking ISOBMFF boxes (the last may be cut).
    static func lastBox(_ bytes: [UInt8], _ type: String) -> Int? {
        var at = 0, found: Int?
        while at + 8 <= bytes.count {
            let size = bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) }
            let name = String(decoding: bytes[at + 4..<at + 8], as: UTF8.self)
            if name == type { found = at + 8 }
            guard size >= 8 else { break }
            at += size
        }
        return found
    }

    static func find(_ needle: [UInt8], in bytes: [UInt8], from: Int) -> Int? {
        guard bytes.count >= needle.count else { return nil }
        for i in from...(bytes.count - needle.count) where bytes[i..<i + needle.count].elementsEqual(needle) { return i }
        return nil
    }
}
