// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
@testable import MetascrubFormats
import XCTest

/// The re-scan's shortcut (`EntropyHint`): a cleaned copy's entropy-coded data is found by comparing it with the
/// original's instead of walking it, and the answer must be the walk's, whether the copy is faithful or not.
final class JPEGEntropyHintTests: XCTestCase {
    var fixtures: [String] { Fixture.all(in: "jpeg", extensions: ["jpg"]) }

    /// The original with a COM segment inserted after SOI: every scan moves, as in a remux that drops segments.
    func shifted(_ bytes: [UInt8]) -> [UInt8] {
        let comment: [UInt8] = [0xFF, 0xFE, 0x00, 0x07] + Array("moved".utf8)
        return Array(bytes[0..<2]) + comment + Array(bytes[2...])
    }

    func testFaithfulCopyIsFoundWithoutAWalkAndWhereTheWalkFindsIt() throws {
        var proven = 0
        for path in fixtures {
            let bytes = try MemoryByteSource(Array(Data(contentsOf: URL(fileURLWithPath: path))))
            guard let original = try? JPEGStructure.parse(bytes) else { continue } // the bad/ folder is elsewhere
            let copy = MemoryByteSource(shifted(bytes.bytes))
            let walked = try JPEGStructure.parse(copy)
            let hinted = try JPEGStructure.parse(copy, hint: EntropyHint(original: bytes, original))
            XCTAssertEqual(hinted.segments.map(\.entropyEnd), walked.segments.map(\.entropyEnd), path)
            XCTAssertEqual(hinted.eoiOffset, walked.eoiOffset, path)
            for segment in hinted.segments where segment.role == .scan {
                XCTAssertEqual(segment.copiedFrom?.source, ObjectIdentifier(bytes), path)
                proven += 1
            }
            // The content check then passes on the proven runs, and still compares with another original.
            XCTAssertTrue(try JPEGVerifier.imageStream(original: bytes, original, cleaned: copy, hinted).passed, path)
        }
        XCTAssertGreaterThan(proven, 5)
    }

    func testChangedEntropyDataFallsBackToTheWalk() throws {
        var changedFiles = 0
        for path in fixtures {
            let source = try MemoryByteSource(Array(Data(contentsOf: URL(fileURLWithPath: path))))
            guard let original = try? JPEGStructure.parse(source),
                  let scan = original.segments.first(where: { $0.role == .scan }), let end = scan.entropyEnd else { continue }
            let start = Int(scan.offset) + scan.length
            guard end - Int64(start) > 16 else { continue }
            var changed = shifted(source.bytes)
            let at = start + 9 + 8 // 9: the inserted COM segment
            // A marker (EOI) planted inside the data: the walk stops there, and so must the hinted parse.
            changed[at] = 0xFF
            changed[at + 1] = 0xD9
            let copy = MemoryByteSource(changed)
            let walked = try? JPEGStructure.parse(copy)
            let hinted = try? JPEGStructure.parse(copy, hint: EntropyHint(original: source, original))
            XCTAssertEqual(hinted?.segments.map(\.entropyEnd), walked?.segments.map(\.entropyEnd), path)
            XCTAssertEqual(hinted?.eoiOffset, walked?.eoiOffset, path)
            XCTAssertNil(hinted?.segments.first(where: { $0.role == .scan })?.copiedFrom, path)
            if let hinted {
                XCTAssertFalse(try JPEGVerifier.imageStream(original: source, original, cleaned: copy, hinted).passed, path)
            }
            changedFiles += 1
        }
        XCTAssertGreaterThan(changedFiles, 5)
    }
}
