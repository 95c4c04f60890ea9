// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubCore
import XCTest

/// Issue 8: a failing file system (full disk, I/O error, failed fsync or rename) never costs the original and
/// never leaves a temp file; the report names the failure and the run exits 3.
final class FaultInjectionTests: XCTestCase {
    typealias Fault = FaultInjectingFileSystem.Fault

    /// Cleans a copy of `fixture` with `faults` injected; checks the file is untouched (or, when the failure
    /// came after the rename, is exactly the verified output), no temp file remains and the error is typed.
    @discardableResult
    func assertFailsSafely(_ faults: [Fault], fixture: String = "jpeg/gps-full.jpg", mode: String = "in-place",
                           replacedIsAllowed: Bool = false, message: String? = nil,
                           file: StaticString = #filePath, line: UInt = #line) async -> FileReport? {
        let dir = EngineFixture.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let name = (fixture as NSString).lastPathComponent
        let input = dir + "/in/" + name
        try! FileManager.default.createDirectory(atPath: dir + "/in", withIntermediateDirectories: true)
        try! FileManager.default.copyItem(atPath: EngineFixture.path(fixture), toPath: input)
        let original = FileManager.default.contents(atPath: input)!
        let reference = EngineFixture.cleanedReference(fixture, in: dir)

        let fs = FaultInjectingFileSystem(faults: faults)
        let engine = Engine(options: ProcessingOptions(policy: try! PolicyCatalog.builtin("strict"), fileSystem: fs), jobs: 1)
        let output: OutputMode = mode == "in-place" ? .inPlace : mode == "dir" ? .directory(dir + "/out") : .file(dir + "/out/" + name)
        if mode == "file" { try! FileManager.default.createDirectory(atPath: dir + "/out", withIntermediateDirectories: true) }
        let report = await engine.clean([input], output: output)

        XCTAssertFalse(fs.injected.isEmpty, "no fault was injected: \(faults)", file: file, line: line)
        XCTAssertEqual(ExitStatus.forClean(report, exitCodeOnChange: false), .failure, "exit status", file: file, line: line)
        guard let fileReport = report.files.first else { XCTFail("no report", file: file, line: line); return nil }
        XCTAssertEqual(fileReport.status, .error, file: file, line: line)
        XCTAssertEqual(fileReport.error?.code, "io", "\(fileReport.error?.message ?? "no error")", file: file, line: line)
        if let message { XCTAssertTrue(fileReport.error?.message.contains(message) ?? false, "\(fileReport.error?.message ?? "")", file: file, line: line) }
        if !replacedIsAllowed {
            XCTAssertNil(fileReport.output, "a failed file must not name an output", file: file, line: line)
        }

        let now = FileManager.default.contents(atPath: input)
        if replacedIsAllowed {
            XCTAssertTrue(now == original || now == reference, "neither the original nor the verified output", file: file, line: line)
        } else {
            XCTAssertEqual(now, original, "the original changed", file: file, line: line)
        }
        if mode != "in-place" {
            let out = dir + "/out/" + name
            if let written = FileManager.default.contents(atPath: out) {
                XCTAssertTrue(replacedIsAllowed && written == reference, "a partial output was left at \(out)", file: file, line: line)
            }
        }
        XCTAssertEqual(EngineFixture.temporaries(under: dir), [], "temp files left behind", file: file, line: line)
        return fileReport
    }

    func testFullDiskOnFirstWrite() async {
        await assertFailsSafely([Fault(.write, errno: ENOSPC)], message: "No space left on device")
    }

    func testIOErrorOnWrite() async {
        await assertFailsSafely([Fault(.write, nth: nil, errno: EIO)], message: "Input/output error")
    }

    func testFailedFsyncOfTheTempFile() async {
        await assertFailsSafely([Fault(.fsync, errno: EIO)], message: "fsync")
    }

    func testFailedRename() async {
        await assertFailsSafely([Fault(.rename, errno: EXDEV)], message: "rename")
    }

    func testFailedTempCreation() async {
        await assertFailsSafely([Fault(.createTemporary, errno: ENOSPC)])
    }

    func testFailedChmodOfTheTempFile() async {
        await assertFailsSafely([Fault(.setMode, errno: EPERM)])
    }

    func testFailedReadOfTheInput() async {
        await assertFailsSafely([Fault(.openForReading, errno: EIO)])
    }

    /// The verifier reopens the finished temp file: if that fails, nothing replaces the original.
    func testFailedReopenOfTheTempFileForVerification() async {
        await assertFailsSafely([Fault(.openForReading, nth: 2, errno: EIO)])
    }

    /// After the rename the target already is the verified output; a failed folder fsync cannot undo that,
    /// so the file is either the original or the complete output, and the error says what happened.
    func testFailedFolderFsyncAfterRename() async {
        let report = await assertFailsSafely([Fault(.syncDirectory, errno: EIO)], replacedIsAllowed: true, message: "could not fsync the folder")
        XCTAssertNotNil(report)
    }

    func testFullDiskWritingIntoAnOutputFolder() async {
        await assertFailsSafely([Fault(.write, errno: ENOSPC)], mode: "dir")
    }

    /// New outputs are fsynced together at the end; if that fails, no output is reported as cleaned.
    func testFailedFinalSyncOfNewOutputs() async {
        await assertFailsSafely([Fault(.flush, errno: EIO)], mode: "dir", replacedIsAllowed: true, message: "fsync")
    }

    func testFailedFolderCreationForAnOutputFolder() async {
        await assertFailsSafely([Fault(.makeDirectories, errno: EROFS)], mode: "dir")
    }

    func testFailedRenameToANamedOutput() async {
        await assertFailsSafely([Fault(.rename, errno: EIO)], mode: "file")
    }

    /// Every format family goes through the same writer: a full disk is handled for each.
    func testFullDiskForEveryImageFamily() async {
        for fixture in ["png/iccp.png", "webp/exif-xmp.webp", "heic/exif-xmp.heic", "mp4/location.mp4", "gif/comment.gif", "tiff/le.tif"]
        where FileManager.default.fileExists(atPath: EngineFixture.path(fixture)) {
            await assertFailsSafely([Fault(.write, nth: nil, errno: ENOSPC)], fixture: fixture)
            await assertFailsSafely([Fault(.fsync, errno: EIO)], fixture: fixture)
        }
    }

    /// A clean run with the same wrapper and no faults writes the same bytes as the plain file system (the
    /// wrapper and the sink change nothing by themselves).
    func testNoFaultsMeansAnOrdinaryClean() async {
        let dir = EngineFixture.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let input = dir + "/a.jpg"
        try! FileManager.default.copyItem(atPath: EngineFixture.path("jpeg/gps-full.jpg"), toPath: input)
        let fs = FaultInjectingFileSystem(faults: [])
        let report = await Engine(options: ProcessingOptions(policy: try! PolicyCatalog.builtin("strict"), fileSystem: fs), jobs: 1)
            .clean([input], output: .inPlace)
        XCTAssertEqual(report.files.first?.status, .cleaned)
        XCTAssertEqual(FileManager.default.contents(atPath: input), EngineFixture.cleanedReference("jpeg/gps-full.jpg", in: dir))
        let calls = fs.calls
        for op in [FaultInjectingFileSystem.Operation.createTemporary, .write, .fsync, .rename, .syncDirectory, .setMode, .openForReading] {
            XCTAssertGreaterThan(calls[op, default: 0], 0, "\(op) does not go through the FileSystem")
        }
        XCTAssertEqual(EngineFixture.temporaries(under: dir), [])
    }
}
