// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubCore
import XCTest

/// Issue 8: temp files a killed run left are removed by the next run that writes to their folder, and
/// nothing else is: not a live writer's, not a file that only looks similar.
final class StaleTemporaryTests: XCTestCase {
    /// The PID of a process that has exited and been reaped.
    func deadPID() -> Int32 {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/true")
        try! p.run()
        p.waitUntilExit()
        return p.processIdentifier
    }

    func touch(_ path: String, contents: String = "partial", mtimeOffset: Int = -60) {
        _ = FileManager.default.createFile(atPath: path, contents: Data(contents.utf8))
        try! FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(TimeInterval(mtimeOffset))], ofItemAtPath: path)
    }

    func testAKilledRunsTempFilesAreRemovedAndNothingElse() async {
        let dir = EngineFixture.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try! FileManager.default.copyItem(atPath: EngineFixture.path("jpeg/gps-full.jpg"), toPath: dir + "/a.jpg")
        let dead = deadPID()
        let stale = ".metascrub-123456-\(dead)-a.jpg.tmp"
        let staleToo = ".metascrub-9-\(dead)-other.png.tmp"
        let live = ".metascrub-77-1-a.jpg.tmp"               // PID 1 exists: a live writer
        let mine = ".metascrub-78-\(getpid())-a.jpg.tmp"      // this process
        let future = ".metascrub-79-\(dead)-b.jpg.tmp"        // modified after the run started
        let lookalikes = [".metascrub-notes.txt", ".metascrub-x-\(dead)-a.tmp", ".metascrub--\(dead)-a.tmp", "metascrub-1-\(dead)-a.tmp"]
        for name in [stale, staleToo, live, mine] + lookalikes { touch(dir + "/" + name) }
        touch(dir + "/" + future, mtimeOffset: 3600)
        try! FileManager.default.createDirectory(atPath: dir + "/.metascrub-5-\(dead)-folder.tmp", withIntermediateDirectories: true)

        let report = await Engine(options: ProcessingOptions(policy: try! PolicyCatalog.builtin("strict")), jobs: 1)
            .clean([dir], output: .inPlace)
        // The look-alikes are ordinary files to the walk (not media: skipped); only a.jpg is cleaned.
        XCTAssertEqual(report.files.filter { $0.status != .skipped }.map(\.status), [.cleaned])
        let left = Set(try! FileManager.default.contentsOfDirectory(atPath: dir))
        XCTAssertFalse(left.contains(stale))
        XCTAssertFalse(left.contains(staleToo))
        for kept in [live, mine, future, ".metascrub-5-\(dead)-folder.tmp"] + lookalikes {
            XCTAssertTrue(left.contains(kept), "\(kept) must not be removed")
        }
        let notes = report.files.flatMap(\.notes).filter { $0.code == "stale-temporary-removed" }
        XCTAssertEqual(notes.count, 1, "one note for the one folder swept: \(notes)")
        XCTAssertTrue(notes.first?.message.contains("removed 2 temporary") ?? false, "\(notes)")
    }

    /// Scanning never writes, so it never removes anything either.
    func testScanLeavesTempFilesAlone() async {
        let dir = EngineFixture.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try! FileManager.default.copyItem(atPath: EngineFixture.path("jpeg/gps-full.jpg"), toPath: dir + "/a.jpg")
        let stale = ".metascrub-1-\(deadPID())-a.jpg.tmp"
        touch(dir + "/" + stale)
        _ = await Engine(options: ProcessingOptions(policy: try! PolicyCatalog.builtin("strict")), jobs: 1).scan([dir])
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir + "/" + stale))
    }

    /// The sweep happens once per folder per run, even with many files in it.
    func testSweepsEachFolderOnce() {
        let dir = EngineFixture.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let fs = FaultInjectingFileSystem(faults: [])
        let sweeper = StaleTemporaries()
        for _ in 0..<5 { sweeper.sweep(dir, fileSystem: fs) }
        XCTAssertEqual(fs.calls[.entries], 1)
    }
}
