// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubCore
import XCTest

/// Every link and every logical stream of an Ogg file: two Vorbis or Opus files joined with `cat` (also with the
/// same serial number) and an `.ogv` whose Theora and Vorbis streams each carry a comment header. Each comment
/// header is itemised where it is and rebuilt on a clean; pages keep valid CRCs and consecutive numbers per
/// stream (an independent reader, Python), decoded frames stay the same (ffmpeg), a second scan is clean.
final class ChainedOggTests: XCTestCase {
    let dir = TempDir()

    static let fixtures: [(name: String, canaries: [String], location: [String])] = [
        ("audio/chained.ogg", ["CANARY-OC1-ARTIST", "CANARY-OC2-ARTIST", "CANARY-OC2-PLACE"], ["CANARY-OC2-PLACE"]),
        ("audio/chained-same-serial.ogg", ["CANARY-OC1-ARTIST", "CANARY-OC2-ARTIST", "CANARY-OC2-PLACE"], ["CANARY-OC2-PLACE"]),
        ("audio/chained.opus", ["CANARY-OP1-ARTIST", "CANARY-OP2-ARTIST", "CANARY-OP2-PLACE"], ["CANARY-OP2-PLACE"]),
        ("video/theora-vorbis.ogv", ["CANARY-OGV-VTITLE", "CANARY-OGV-ARTIST", "CANARY-OGV-PLACE", "CANARY-OGV-ENC"], ["CANARY-OGV-PLACE"]),
    ]

    func testEveryStreamsCommentHeaderIsItemisedWhereItIs() {
        for (name, stream) in [("audio/chained.ogg", "link 2 stream 7 Vorbis"), ("audio/chained-same-serial.ogg", "link 2 stream 0 Vorbis"),
                               ("audio/chained.opus", "link 2 stream 0 Opus"), ("video/theora-vorbis.ogv", "link 1 stream 1 Vorbis")] {
            let items = Run.scan(Fixture.path(name)).findings.map(\.item)
            let location = items.first { $0.key == "vorbis:LOCATION" }
            XCTAssertEqual(location?.category, .location, name)
            XCTAssertTrue(location?.location.hasPrefix(stream) ?? false, "\(name): \(location?.location ?? "no LOCATION item")")
            XCTAssertEqual(items.filter { $0.key == "vorbis:vendor" }.count, 2, "\(name): one vendor string per stream")
        }
    }

    func testEveryLinkAndStreamIsCleanedUnderEveryPolicy() throws {
        try Tool.require("ffmpeg", "python3")
        for (name, canaries, positions) in Self.fixtures {
            let input = Fixture.path(name)
            for canary in canaries { XCTAssertTrue(Oracle.contains(input, canary), "\(name): fixture lacks \(canary)") }
            let frames = VideoOracle.frames(input)
            XCTAssertGreaterThan(frames?.count ?? 0, 10, name)
            for policy in NestedStreamTests.policies {
                let output = dir.file("\(policy)-\((name as NSString).lastPathComponent)")
                let report = Run.clean(input, to: output, policy: policy)
                XCTAssertEqual(report.status, .cleaned, "\(name) \(policy): \(report.error?.message ?? "")")
                for canary in policy == "location" ? positions : canaries {
                    XCTAssertFalse(Oracle.contains(output, canary), "\(name) \(policy): \(canary) left")
                }
                XCTAssertFalse(Oracle.contains(output, "48.8584"), "\(name) \(policy): a position left")
                XCTAssertEqual(Self.pageCheck(output), "ok", "\(name) \(policy)")
                XCTAssertEqual(VideoOracle.frames(output), frames, "\(name) \(policy): decoded frames changed")
                XCTAssertEqual(Run.scan(output, policy: policy).status, .clean, "\(name) \(policy): not a fixed point")
            }
        }
    }

    /// Every page's CRC and, per link and serial number, consecutive sequence numbers from 0 ("ok", or what is wrong).
    static func pageCheck(_ path: String) -> String {
        let script = """
        import sys, struct
        b = open(sys.argv[1], 'rb').read()
        T = []
        for i in range(256):
            r = i << 24
            for _ in range(8): r = ((r << 1) ^ 0x04C11DB7) & 0xFFFFFFFF if r & 0x80000000 else (r << 1) & 0xFFFFFFFF
            T.append(r)
        def crc(d):
            c = 0
            for x in d: c = ((c << 8) & 0xFFFFFFFF) ^ T[(c >> 24) ^ x]
            return c
        at, link, seq, prev_bos, bad = 0, 0, {}, False, []
        while at < len(b):
            if b[at:at + 4] != b'OggS': bad.append('no page at %d' % at); break
            flags, serial, number, stored = b[at + 5], *struct.unpack('<III', b[at + 14:at + 26])
            n = b[at + 26]; size = 27 + n + sum(b[at + 27:at + 27 + n])
            page = bytearray(b[at:at + size]); page[22:26] = b'\\0\\0\\0\\0'
            if crc(page) != stored: bad.append('crc at %d' % at)
            bos = bool(flags & 2)
            if bos and not prev_bos: link += 1
            expected = 0 if bos else seq.get((link, serial), -1) + 1
            if number != expected: bad.append('sequence %d at %d, expected %d' % (number, at, expected))
            seq[(link, serial)] = number; prev_bos = bos; at += size
        print('; '.join(bad[:3]) or 'ok')
        """
        let r = Tool.run(["python3", "-c", script, path])
        return String(decoding: r.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
