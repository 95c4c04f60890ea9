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

    /// A server job writes kept bytes from its mapped input instead of copying them in the kernel: the same output
    /// bytes, and a failing write is still an error, not a short file.
    func testAServerJobWritesTheSameBytesFromItsMappedInput() throws {
        let dir = EngineFixture.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let input = dir + "/big.jpg"
        // Large enough for runs of kept bytes past the 64 KiB where they stop being buffered.
        for step in [["/usr/bin/convert", "-size", "900x700", "plasma:fractal", "-seed", "3", "-quality", "95", input],
                     ["/usr/bin/exiftool", "-q", "-overwrite_original", "-GPSLatitude=48.85", "-Model=Canary", input]] {
            let tool = Process()
            tool.executableURL = URL(fileURLWithPath: step[0])
            tool.arguments = Array(step.dropFirst())
            try tool.run()
            tool.waitUntilExit()
            XCTAssertEqual(tool.terminationStatus, 0, step[0])
        }
        XCTAssertGreaterThan(try XCTUnwrap(FileManager.default.attributesOfItem(atPath: input)[.size] as? Int), 1 << 17)
        let policy = try PolicyCatalog.builtin("strict")
        var outputs: [Data] = []
        for privateJob in [false, true] {
            let output = dir + "/out-\(privateJob).jpg"
            let options = ProcessingOptions(policy: policy, fileSystem: PosixFileSystem(privateJob: privateJob))
            let report = FileProcessor(options: options)
                .clean(InputFile(path: input, relative: "big.jpg"), output: .file(output))
            XCTAssertEqual(report.status, .cleaned, "\(report.error?.message ?? "")")
            outputs.append(try Data(contentsOf: URL(fileURLWithPath: output)))
        }
        XCTAssertEqual(outputs[0], outputs[1], "a server job's output differs from the CLI's")
        XCTAssertNil(outputs[1].range(of: Data("Canary".utf8)))
        let failing = FaultInjectingFileSystem(base: PosixFileSystem(privateJob: true),
                                               faults: [.init(.write, nth: nil, errno: ENOSPC)])
        let options = ProcessingOptions(policy: policy, fileSystem: failing)
        let report = FileProcessor(options: options)
            .clean(InputFile(path: input, relative: "big.jpg"), output: .file(dir + "/full.jpg"))
        XCTAssertEqual(report.status, .error)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/full.jpg"), "a failed write left a file")
    }
}
