// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
@testable import Metascrub
import MetascrubCore
import MetascrubFormats
import XCTest

/// Issue 9: the speed-ups must not change what is promised — the C digest equals the reference one, an
/// original replaced in place is still fsynced, and digests are still there when asked for.
final class PerformanceChoicesTests: XCTestCase {
    func testCDigestMatchesTheSwiftReferenceForFilesAndMemory() throws {
        let dir = EngineFixture.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // Sizes around the 64-byte block and the 1 MiB read buffer.
        for size in [0, 1, 55, 56, 63, 64, 65, 1000, (1 << 20) - 1, 1 << 20, (1 << 20) + 17] {
            var generator = SystemRandomNumberGenerator()
            let bytes = (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let path = dir + "/b\(size)"
            FileManager.default.createFile(atPath: path, contents: Data(bytes))
            let expected = SHA256.hex(bytes)
            XCTAssertEqual(try Hashing.sha256(FileByteSource(path: path)), expected, "file of \(size) bytes")
            XCTAssertEqual(try Hashing.sha256(MemoryByteSource(bytes)), expected, "\(size) bytes in memory")
        }
        XCTAssertEqual(try Hashing.sha256(MemoryByteSource(Array("abc".utf8))),
                       "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    func testInPlaceIsFsyncedAndANewOutputIsNot() async throws {
        let dir = EngineFixture.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let input = dir + "/a.jpg"
        try FileManager.default.copyItem(atPath: EngineFixture.path("jpeg/gps-full.jpg"), toPath: input)
        let policy = try PolicyCatalog.builtin("strict")

        let fresh = FaultInjectingFileSystem(faults: [])
        var report = await Engine(options: ProcessingOptions(policy: policy, fileSystem: fresh), jobs: 1)
            .clean([input], output: .directory(dir + "/out"))
        XCTAssertEqual(report.files.first?.status, .cleaned)
        XCTAssertEqual(fresh.calls[.fsync, default: 0], 0, "a new file in an output folder replaces nothing")

        let replacing = FaultInjectingFileSystem(faults: [])
        report = await Engine(options: ProcessingOptions(policy: policy, fileSystem: replacing), jobs: 1)
            .clean([input], output: .inPlace)
        XCTAssertEqual(report.files.first?.status, .cleaned)
        XCTAssertGreaterThan(replacing.calls[.fsync, default: 0], 0, "an original replaced in place is fsynced")
        XCTAssertGreaterThan(replacing.calls[.syncDirectory, default: 0], 0)
    }

    func testDigestsOnlyWhenAsked() async throws {
        let dir = EngineFixture.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let input = EngineFixture.path("jpeg/gps-full.jpg")
        var options = ProcessingOptions(policy: try PolicyCatalog.builtin("strict"))
        var report = await Engine(options: options, jobs: 1).clean([input], output: .directory(dir + "/with"))
        let original = try Data(contentsOf: URL(fileURLWithPath: input))
        XCTAssertEqual(report.files.first?.sha256Before, SHA256.hex(Array(original)))
        XCTAssertNotNil(report.files.first?.sha256After)
        options.digests = false
        report = await Engine(options: options, jobs: 1).clean([input], output: .directory(dir + "/without"))
        XCTAssertEqual(report.files.first?.status, .cleaned)
        XCTAssertNil(report.files.first?.sha256Before)
        XCTAssertNil(report.files.first?.sha256After)
    }
}
