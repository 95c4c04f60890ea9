// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubCore
import XCTest

/// Issue 25: a batch that replaces files commits them together (fsyncs sharing a journal commit, renames, one
/// folder fsync per chunk) and keeps the in-place promise: an original is replaced only by a durable, verified
/// file; a failed fsync or rename costs that file its clean, never its original, and leaves no temp file.
final class GroupCommitTests: XCTestCase {
    typealias Fault = FaultInjectingFileSystem.Fault
    static let fixtures = ["jpeg/gps-full.jpg", "jpeg/xmp.jpg", "jpeg/iptc.jpg", "png/iccp.png"]

    struct Batch {
        var dir: String
        var inputs: [String]
        var originals: [Data]
        var references: [Data?]
    }

    func makeBatch() -> Batch {
        let dir = EngineFixture.tempDir()
        try! FileManager.default.createDirectory(atPath: dir + "/in", withIntermediateDirectories: true)
        var batch = Batch(dir: dir, inputs: [], originals: [], references: [])
        for fixture in Self.fixtures {
            let input = dir + "/in/" + (fixture as NSString).lastPathComponent
            try! FileManager.default.copyItem(atPath: EngineFixture.path(fixture), toPath: input)
            batch.inputs.append(input)
            batch.originals.append(FileManager.default.contents(atPath: input)!)
            batch.references.append(EngineFixture.cleanedReference(fixture, in: dir))
        }
        return batch
    }

    func clean(_ batch: Batch, _ fs: FaultInjectingFileSystem, jobs: Int = 2) async -> Report {
        await Engine(options: ProcessingOptions(policy: try! PolicyCatalog.builtin("strict"), fileSystem: fs), jobs: jobs)
            .clean(batch.inputs, output: .inPlace)
    }

    func testABatchIsCommittedWithOneFolderFsync() async {
        let batch = makeBatch()
        defer { try? FileManager.default.removeItem(atPath: batch.dir) }
        let fs = FaultInjectingFileSystem(faults: [])
        let report = await clean(batch, fs)
        XCTAssertEqual(report.files.map(\.status), Array(repeating: .cleaned, count: batch.inputs.count))
        for (index, input) in batch.inputs.enumerated() {
            XCTAssertEqual(FileManager.default.contents(atPath: input), batch.references[index], input)
        }
        XCTAssertEqual(fs.calls[.fsync], batch.inputs.count, "every replacing file is fsynced before its rename")
        XCTAssertEqual(fs.calls[.rename], batch.inputs.count)
        XCTAssertEqual(fs.calls[.syncDirectory], 1, "one folder, synced once for the batch")
        XCTAssertEqual(EngineFixture.temporaries(under: batch.dir), [])
    }

    func testAFailedFsyncOrRenameCostsOnlyThatFilesClean() async {
        for fault in [Fault(.fsync, nth: 2, errno: EIO), Fault(.rename, nth: 3, errno: EIO)] {
            let batch = makeBatch()
            defer { try? FileManager.default.removeItem(atPath: batch.dir) }
            let fs = FaultInjectingFileSystem(faults: [fault])
            let report = await clean(batch, fs, jobs: 1)
            XCTAssertEqual(fs.injected.count, 1, "\(fault)")
            let failed = report.files.indices.filter { report.files[$0].status == .error }
            XCTAssertEqual(failed.count, 1, "\(fault): \(report.files.map(\.status))")
            for index in batch.inputs.indices {
                let now = FileManager.default.contents(atPath: batch.inputs[index])
                if failed.contains(index) {
                    XCTAssertEqual(now, batch.originals[index], "\(fault): the original changed")
                    XCTAssertNil(report.files[index].output, "\(fault)")
                    XCTAssertEqual(report.files[index].error?.code, "io")
                } else {
                    XCTAssertEqual(now, batch.references[index], "\(fault): \(batch.inputs[index])")
                }
            }
            XCTAssertEqual(ExitStatus.forClean(report, exitCodeOnChange: false), .failure)
            XCTAssertEqual(EngineFixture.temporaries(under: batch.dir), [], "\(fault): temp files left behind")
        }
    }

    /// After the renames every target already is its verified output; a failed folder fsync is said plainly.
    func testAFailedFolderFsyncNamesTheOutputsItCouldNotMakeDurable() async {
        let batch = makeBatch()
        defer { try? FileManager.default.removeItem(atPath: batch.dir) }
        let fs = FaultInjectingFileSystem(faults: [Fault(.syncDirectory, errno: EIO)])
        let report = await clean(batch, fs)
        for (index, file) in report.files.enumerated() {
            XCTAssertEqual(file.status, .error)
            XCTAssertTrue(file.error?.message.contains("could not fsync the folder") ?? false, file.error?.message ?? "")
            XCTAssertEqual(FileManager.default.contents(atPath: batch.inputs[index]), batch.references[index])
        }
        XCTAssertEqual(EngineFixture.temporaries(under: batch.dir), [])
    }

    func testChunksAreBoundedByCountAndBytes() {
        func file(_ size: Int64) -> InputFile { InputFile(path: "/x", relative: "x", size: size) }
        XCTAssertEqual(Engine.chunks((0..<130).map { _ in file(1) }), [0..<64, 64..<128, 128..<130])
        XCTAssertEqual(Engine.chunks([file(200 << 20), file(100 << 20), file(10), file(300 << 20)]), [0..<1, 1..<3, 3..<4])
        XCTAssertEqual(Engine.chunks([]), [])
    }
}
