// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import MetascrubCore
@testable import MetascrubFormats
import XCTest

/// A stream whose only frame is cut short (ExifTool's MP3 test file: an ID3v2 tag, one frame header, an ID3v1 tag) is
/// audio cut short, not unknown bytes: the clean keeps it and removes only the tags.
final class MP3CutFrameTests: XCTestCase {
    func testAFirstFrameCutByTheEndIsAudio() throws {
        let id3v2: [UInt8] = Array("ID3".utf8) + [3, 0, 0, 0, 0, 0, 17] + Array("TIT2".utf8) + [0, 0, 0, 7, 0, 0, 0]
            + Array("Title!".utf8)
        let frame: [UInt8] = [0xFF, 0xFB, 0x90, 0x6C]
        let id3v1: [UInt8] = Array("TAG".utf8) + Array("Title".utf8) + [UInt8](repeating: 0, count: 120)
        let file = id3v2 + frame + id3v1
        let scan = try MP3Format().scan(MemoryByteSource(file), options: ScanOptions())
        XCTAssertFalse(scan.items.contains { $0.key == "mp3:unknown" }, "\(scan.items.map(\.key))")
        let dir = TempDir()
        let input = dir.file("stub.mp3"), output = dir.file("stub-clean.mp3")
        try Data(file).write(to: URL(fileURLWithPath: input))
        let report = Run.clean(input, to: output)
        XCTAssertEqual(report.status, .cleaned, "\(report.error.map { "\($0)" } ?? "")")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: output)), Data(frame))
    }
}
