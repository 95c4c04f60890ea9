// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubCore
import XCTest

/// MP3, FLAC, Ogg Vorbis/Opus, WAV/RF64 and AIFF/AIFC: strict cleaning judged by ExifTool (nothing but stream
/// structure left), the canaries' absence from the bytes, ffmpeg's decoded audio (identical), and the
/// container rules each rewrite must keep (sizes, flags, CRCs, page numbers).
final class AudioTests: XCTestCase {
    let dir = TempDir()

    static let cleanable = [
        "id3v23.mp3", "id3v24-ape.mp3", "id3v22.mp3", "appended-id3.mp3", "blocks.flac", "id3-prefixed.flac", "vorbis.ogg",
        "vorbis-multipage.ogg", "opus.opus", "chunks.wav", "rf64.wav", "chunks.aiff", "chunks.aifc",
    ]

    static func bytes(_ path: String) -> [UInt8] { [UInt8](FileManager.default.contents(atPath: path) ?? Data()) }

    /// Cleans with strict and checks the output with ExifTool, the manifest canaries and ffmpeg.
    @discardableResult
    func strictClean(_ name: String, file: StaticString = #filePath, line: UInt = #line) -> (report: FileReport, output: String) {
        let input = Fixture.path("audio/\(name)")
        let output = dir.file(name)
        let report = Run.clean(input, to: output)
        XCTAssertEqual(report.status, .cleaned, "\(name): \(report.error.map { "\($0)" } ?? "")", file: file, line: line)
        XCTAssertEqual(Oracle.audioResidual(output), [], "\(name): ExifTool still sees metadata", file: file, line: line)
        for canary in ContainerChecks.canaries("audio/\(name)") {
            XCTAssertFalse(Oracle.contains(output, canary), "\(name): canary \(canary) left", file: file, line: line)
        }
        let before = Oracle.decodedAudio(input)
        XCTAssertNotNil(before, "\(name): ffmpeg cannot decode the input", file: file, line: line)
        XCTAssertEqual(before, Oracle.decodedAudio(output), "\(name): decoded audio changed", file: file, line: line)
        return (report, output)
    }

    func testStrictCleanRemovesEverythingAndKeepsTheAudio() {
        for name in Self.cleanable { strictClean(name) }
    }

    func testScanNamesEveryTagKind() {
        let mp3 = Set(Run.scan(Fixture.path("audio/id3v23.mp3")).findings.map(\.item.key))
        for key in ["id3:APIC", "id3:PRIV", "id3:GEOB", "id3:COMM", "id3:TXXX", "id3:USLT", "id3:TPE1", "id3:POPM", "id3v1:tag", "mp3:encoder"] {
            XCTAssertTrue(mp3.contains(key), "id3v23.mp3: \(key) not reported")
        }
        let v22 = Set(Run.scan(Fixture.path("audio/id3v22.mp3")).findings.map(\.item.key))
        XCTAssertTrue(v22.isSuperset(of: ["id3:TIT2", "id3:TPE1", "id3:APIC", "id3:COMM"]), "v2.2 IDs map to v2.3 keys: \(v22)")
        let ape = Set(Run.scan(Fixture.path("audio/id3v24-ape.mp3")).findings.map(\.item.key))
        XCTAssertTrue(ape.isSuperset(of: ["ape:tag", "ape:Artist", "id3:TDRC", "id3v1:tag"]), "\(ape)")
        let appended = Set(Run.scan(Fixture.path("audio/appended-id3.mp3")).findings.map(\.item.key))
        XCTAssertTrue(appended.isSuperset(of: ["lyrics3:tag", "id3:tag", "id3:TPE1"]), "\(appended)")
        let flac = Set(Run.scan(Fixture.path("audio/blocks.flac")).findings.map(\.item.key))
        XCTAssertTrue(flac.isSuperset(of: ["vorbis:vendor", "vorbis:ARTIST", "vorbis:DATE", "flac:picture", "flac:application"]), "\(flac)")
        let ogg = Run.scan(Fixture.path("audio/vorbis-multipage.ogg")).findings
        XCTAssertEqual(ogg.first { $0.item.key == "vorbis:METADATA_BLOCK_PICTURE" }?.item.category, .embedded)
        XCTAssertEqual(Run.scan(Fixture.path("audio/vorbis.ogg")).findings.first { $0.item.key == "vorbis:LOCATION" }?.item.category, .location)
        let wav = Set(Run.scan(Fixture.path("audio/chunks.wav")).findings.map(\.item.key))
        for key in ["riff:bext", "riff:iXML", "riff:cart", "riff:JUNK", "riff:INFO/IART", "riff:INFO/INAM", "xmp:dc:creator", "id3:TPE1", "id3:APIC"] {
            XCTAssertTrue(wav.contains(key), "chunks.wav: \(key) not reported")
        }
        let aiff = Set(Run.scan(Fixture.path("audio/chunks.aiff")).findings.map(\.item.key))
        XCTAssertTrue(aiff.isSuperset(of: ["aiff:NAME", "aiff:AUTH", "aiff:(c)", "aiff:ANNO", "aiff:COMT", "aiff:APPL", "id3:TPE1"]), "\(aiff)")
        // Values only with --show-values.
        XCTAssertTrue(Run.scan(Fixture.path("audio/id3v23.mp3")).findings.allSatisfy { $0.item.value == nil })
    }

    /// LAME tag: the family prefix stays (decoders need it for gapless trimming), the version goes, the CRC
    /// over the first bytes of the frame is valid again; no tag bytes remain around the frames.
    func testMP3LameVersionNeutralisedWithValidCRC() {
        let output = strictClean("id3v23.mp3").output
        let b = Self.bytes(output)
        XCTAssertTrue(b.count > 2 && b[0] == 0xFF && b[1] & 0xE0 == 0xE0, "output starts with the first frame")
        XCTAssertFalse(b.suffix(128).starts(with: Array("TAG".utf8)), "ID3v1 left")
        guard let at = b.firstRange(of: Array("LAME".utf8))?.lowerBound else { return XCTFail("LAME prefix gone") }
        XCTAssertEqual(Array(b[at + 4..<at + 9]), Array("     ".utf8))
        var crc: UInt16 = 0
        for byte in b[0..<at + 34] {
            crc ^= UInt16(byte)
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xA001 : crc >> 1 }
        }
        XCTAssertEqual(UInt16(b[at + 34]) << 8 | UInt16(b[at + 35]), crc, "LAME tag CRC")
        // Everything after the LAME tag CRC is the input's frames, byte for byte (the input ends with ID3v1).
        let input = Self.bytes(Fixture.path("audio/id3v23.mp3"))
        guard let inAt = input.firstRange(of: Array("LAME3.100".utf8))?.lowerBound else { return XCTFail("fixture has no LAME3.100") }
        XCTAssertEqual(Array(b[(at + 36)...]), Array(input[(inAt + 36)..<(input.count - 128)]))
    }

    static func flacBlocks(_ b: [UInt8]) -> [(last: Bool, type: UInt8, payload: [UInt8])] {
        guard let start = b.firstRange(of: Array("fLaC".utf8))?.lowerBound else { return [] }
        var out: [(Bool, UInt8, [UInt8])] = []
        var at = start + 4
        while at + 4 <= b.count {
            let n = Int(b[at + 1]) << 16 | Int(b[at + 2]) << 8 | Int(b[at + 3])
            out.append((b[at] & 0x80 != 0, b[at] & 0x7F, Array(b[at + 4..<min(b.count, at + 4 + n)])))
            if b[at] & 0x80 != 0 { break }
            at += 4 + n
        }
        return out
    }

    func testFLACKeepsStreamInfoSeekTableAndAnEmptyComment() {
        for name in ["blocks.flac", "id3-prefixed.flac"] {
            let output = strictClean(name).output
            let before = Self.flacBlocks(Self.bytes(Fixture.path("audio/\(name)")))
            let after = Self.flacBlocks(Self.bytes(output))
            XCTAssertTrue(Self.bytes(output).starts(with: Array("fLaC".utf8)), "\(name): ID3v2 before fLaC left")
            XCTAssertEqual(after.map(\.type), [0, 3, 4], name)
            XCTAssertEqual(after.map(\.last), [false, false, true], "\(name): last-metadata-block flag")
            XCTAssertEqual(after.last?.payload, [0, 0, 0, 0, 0, 0, 0, 0], "\(name): empty vendor, no comments")
            XCTAssertEqual(before.first?.payload, after.first?.payload, "\(name): STREAMINFO changed")
            XCTAssertEqual(before.first { $0.type == 3 }?.payload, after.first { $0.type == 3 }?.payload, "\(name): SEEKTABLE changed")
        }
    }

    struct Page { var flags: UInt8; var granule: UInt64; var serial: UInt32; var sequence: UInt32; var crcOK: Bool; var headerLacing: Int; var body: [UInt8] }

    static func oggPages(_ b: [UInt8]) -> [Page] {
        var pages: [Page] = []
        var at = 0
        while at + 27 <= b.count, b[at..<at + 4].elementsEqual("OggS".utf8) {
            let n = Int(b[at + 26])
            guard at + 27 + n <= b.count else { break }
            let size = 27 + n + b[at + 27..<at + 27 + n].reduce(0) { $0 + Int($1) }
            guard at + size <= b.count else { break }
            var page = Array(b[at..<at + size])
            let stored = UInt32(page[22]) | UInt32(page[23]) << 8 | UInt32(page[24]) << 16 | UInt32(page[25]) << 24
            page.replaceSubrange(22..<26, with: [0, 0, 0, 0])
            var crc: UInt32 = 0
            for byte in page {
                crc ^= UInt32(byte) << 24
                for _ in 0..<8 { crc = crc & 0x8000_0000 != 0 ? (crc << 1) ^ 0x04C1_1DB7 : crc << 1 }
            }
            func u32(_ o: Int) -> UInt32 { UInt32(b[o]) | UInt32(b[o + 1]) << 8 | UInt32(b[o + 2]) << 16 | UInt32(b[o + 3]) << 24 }
            let granule = UInt64(u32(at + 6)) | UInt64(u32(at + 10)) << 32
            pages.append(Page(flags: b[at + 5], granule: granule, serial: u32(at + 14), sequence: u32(at + 18), crcOK: crc == stored, headerLacing: n,
                              body: Array(b[at + 27 + n..<at + size])))
            at += size
        }
        return pages
    }

    /// The multi-page comment shrinks to one page: later pages are renumbered with valid CRCs, and their
    /// packets and granule positions are unchanged.
    func testOggPagesRenumberedWithValidCRCs() {
        for name in ["vorbis-multipage.ogg", "vorbis.ogg", "opus.opus"] {
            let output = strictClean(name).output
            let before = Self.oggPages(Self.bytes(Fixture.path("audio/\(name)")))
            let after = Self.oggPages(Self.bytes(output))
            XCTAssertEqual(Self.bytes(output).count, after.reduce(0) { $0 + 27 + $1.headerLacing + $1.body.count }, "\(name): bytes outside pages")
            XCTAssertTrue(after.allSatisfy(\.crcOK), "\(name): page CRC")
            XCTAssertEqual(after.map(\.sequence), (0..<UInt32(after.count)).map { $0 }, "\(name): page sequence numbers")
            XCTAssertEqual(Set(after.map(\.serial)).count, 1, name)
            // Header pages carry granule 0 (or -1 while a header packet continues); audio pages more.
            func firstAudio(_ pages: [Page]) -> Int { pages.firstIndex { $0.granule != 0 && $0.granule != .max } ?? pages.count }
            let hb = firstAudio(before), ha = firstAudio(after)
            XCTAssertEqual(before.count - hb, after.count - ha, "\(name): audio page count")
            let x = before[hb...], y = after[ha...]
            // Audio pages: same bodies, flags and granules, in the same order.
            XCTAssertEqual(x.map(\.granule), y.map(\.granule), "\(name): granules")
            XCTAssertEqual(x.map(\.body), y.map(\.body), "\(name): audio packets")
            XCTAssertEqual(x.map(\.flags), y.map(\.flags), "\(name): page flags")
        }
        XCTAssertGreaterThan(Self.oggPages(Self.bytes(Fixture.path("audio/vorbis-multipage.ogg"))).prefix(4).filter { $0.granule == .max }.count, 0,
                             "fixture's comment header spans pages")
    }

    static func iffChunks(_ b: [UInt8], bigEndian: Bool) -> (formSize: Int, ids: [String]) {
        func u32(_ o: Int) -> Int {
            bigEndian ? Int(b[o]) << 24 | Int(b[o + 1]) << 16 | Int(b[o + 2]) << 8 | Int(b[o + 3])
                : Int(b[o]) | Int(b[o + 1]) << 8 | Int(b[o + 2]) << 16 | Int(b[o + 3]) << 24
        }
        guard b.count >= 12 else { return (0, []) }
        var ids: [String] = []
        var at = 12
        while at + 8 <= b.count {
            let id = String(decoding: b[at..<at + 4], as: UTF8.self)
            var n = u32(at + 4)
            if n == 0xFFFF_FFFF, id == "data" { n = b.count - at - 8 }
            ids.append(id)
            at += 8 + n + (n & 1)
        }
        return (u32(4), ids)
    }

    func testWAVAndRF64KeepOnlyFormatAndData() {
        let riff = Self.bytes(strictClean("chunks.wav").output)
        let (size, ids) = Self.iffChunks(riff, bigEndian: false)
        XCTAssertEqual(ids, ["fmt ", "data"])
        XCTAssertEqual(size + 8, riff.count, "RIFF size")
        let rf64 = Self.bytes(strictClean("rf64.wav").output)
        XCTAssertEqual(Self.iffChunks(rf64, bigEndian: false).ids, ["ds64", "fmt ", "data"])
        let riffSize64 = rf64[20..<28].reversed().reduce(0) { $0 << 8 | Int($1) }
        XCTAssertEqual(riffSize64 + 8, rf64.count, "ds64 RIFF size")
        XCTAssertEqual(Array(rf64[4..<8]), [0xFF, 0xFF, 0xFF, 0xFF])
    }

    func testAIFFKeepsOnlyStructuralChunks() {
        let aiff = Self.bytes(strictClean("chunks.aiff").output)
        XCTAssertEqual(Self.iffChunks(aiff, bigEndian: true).ids, ["COMM", "SSND"])
        XCTAssertEqual(Self.iffChunks(aiff, bigEndian: true).formSize + 8, aiff.count, "FORM size")
        let aifc = Self.bytes(strictClean("chunks.aifc").output)
        XCTAssertEqual(Self.iffChunks(aifc, bigEndian: true).ids, ["FVER", "COMM", "SSND"])
    }

    /// A policy that removes only pictures rebuilds the tags around them.
    func testPartialPolicyRebuildsTags() {
        let policy = Policy(name: "test-no-pictures", keys: [KeyPattern("id3:APIC"): .remove, KeyPattern("flac:picture"): .remove,
                                                               KeyPattern("vorbis:METADATA_BLOCK_PICTURE"): .remove],
                            unknown: .keep, fallback: .keep, orientation: .keep)
        for (name, kept, gone) in [("id3v23.mp3", "ID3v2_3:Artist", "ID3v2_3:Picture"), ("chunks.wav", "ID3v2_3:Artist", "ID3v2_3:Picture"),
                                   ("blocks.flac", "Vorbis:Artist", "FLAC:Picture"), ("opus.opus", "Vorbis:Artist", "FLAC:Picture"),
                                   ("chunks.aiff", "ID3v2_4:Artist", "ID3v2_4:Picture")] {
            let output = dir.file("partial-" + name)
            let report = Run.clean(Fixture.path("audio/\(name)"), to: output, policy: policy)
            XCTAssertEqual(report.status, .cleaned, "\(name): \(report.error.map { "\($0)" } ?? "")")
            let tags = Oracle.exiftool(output)
            XCTAssertNotNil(tags[kept], "\(name): \(kept) should stay")
            XCTAssertNil(tags[gone], "\(name): \(gone) should go")
            XCTAssertFalse(Oracle.contains(output, "CanaryMake") || Oracle.contains(output, "CANARY-ARTIST-Alice"), "\(name): cover EXIF left")
            XCTAssertEqual(Oracle.decodedAudio(Fixture.path("audio/\(name)")), Oracle.decodedAudio(output), "\(name): audio changed")
        }
    }

    func testBrokenFilesAreRefused() {
        for (name, code) in [("truncated-tag.mp3", "truncated"), ("no-frames.mp3", "malformed"), ("bad-block.flac", "truncated"),
                             ("truncated-header.ogg", "truncated"), ("bad-crc.ogg", "malformed"), ("cut-in-list.wav", "truncated"),
                             ("truncated.aiff", "truncated")] {
            ContainerChecks.assertRefused("audio/bad/\(name)", in: dir, code: code)
            XCTAssertNotNil(Run.scan(Fixture.path("audio/bad/\(name)")).error?.offset, "\(name): error without an offset")
        }
    }

    func testTruncatedAndCorruptedInputNeverCrashes() {
        for name in ["id3v23.mp3", "id3v24-ape.mp3", "appended-id3.mp3", "blocks.flac", "vorbis-multipage.ogg", "opus.opus", "chunks.wav", "rf64.wav", "chunks.aiff"] {
            ContainerChecks.assertRobust("audio/\(name)", in: dir)
        }
    }
}
