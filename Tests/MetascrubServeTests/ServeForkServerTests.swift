// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// The fork server (issue 33 item 6): workers are forked from it, one fresh child per file (forked ahead, as the
/// spare), and the server falls back to exec'ing workers when it is gone or switched off.
final class ServeForkServerTests: ServeTestCase {
    private func cleanOnce(_ server: ServeProcess) -> CurlResult {
        Curl.post(server.base + "/v1/clean", file: ServeProcess.fixture("jpeg/gps-full.jpg"), scratch: scratch)
    }

    func testEachFileGetsAFreshForkedChild() throws {
        let server = try start(["--workers", "2"], stallMs: 300)
        let forkServer = try XCTUnwrap(server.forkServerPID, "no fork server started")
        var seen = Set<pid_t>()
        for _ in 0..<3 {
            let pending = Curl.start(server.base + "/v1/clean", file: ServeProcess.fixture("jpeg/gps-full.jpg"),
                                     scratch: scratch)
            let worker = try XCTUnwrap(server.waitForWorker(), "no worker started")
            // The last file's child may still be tearing down after its word; this one stalls for 300 ms.
            for _ in 0..<20 where ServeProcess.workers(of: forkServer) != [worker] { usleep(10_000) }
            XCTAssertEqual(ServeProcess.workers(of: forkServer), [worker], "the worker is not the fork server's child")
            seen.insert(worker)
            XCTAssertEqual(pending.finish().status, 200)
        }
        XCTAssertEqual(seen.count, 3, "a worker served more than one file")
        // Started again with every library bound at load, under its own name.
        let environment = try String(contentsOfFile: "/proc/\(forkServer)/environ", encoding: .utf8)
        XCTAssertTrue(environment.split(separator: "\0").contains("LD_BIND_NOW=1"), "the fork server binds lazily")
        XCTAssertEqual(try String(contentsOfFile: "/proc/\(forkServer)/comm", encoding: .utf8), "metascrub\n")
        for _ in 0..<100 where ServeProcess.workers(of: forkServer) != [] { usleep(10_000) }
        XCTAssertEqual(ServeProcess.workers(of: forkServer), [], "a child outlived its file")
        // The next file's child is already forked, waiting; it has had no file yet.
        let spare = ServeProcess.spares(of: forkServer)
        XCTAssertEqual(spare.count, 1, "no spare waits for the next file")
        XCTAssertTrue(seen.isDisjoint(with: spare), "a child that had a file is waiting for another")
        XCTAssertEqual(server.spoolJobs, [])
    }

    /// The spare is forked ahead of its file: one that dies before it gets a file (killed, out of memory) costs no
    /// request; the next file gets a child forked for it, and a new spare follows.
    func testADeadSpareCostsNoRequest() throws {
        let server = try start()
        XCTAssertEqual(cleanOnce(server).status, 200)
        let forkServer = try XCTUnwrap(server.forkServerPID, "no fork server started")
        let spare = try XCTUnwrap(ServeProcess.spares(of: forkServer).first, "no spare waits for the next file")
        XCTAssertEqual(kill(spare, SIGKILL), 0)
        for _ in 0..<200 where ServeProcess.children(of: forkServer).contains(spare) { usleep(10_000) }
        XCTAssertFalse(ServeProcess.children(of: forkServer).contains(spare), "the killed spare was not reaped")
        let result = cleanOnce(server)
        XCTAssertEqual(result.status, 200, result.bodyText + server.serverLog)
        XCTAssertEqual(result.headers["metascrub-status"], "cleaned")
        XCTAssertEqual(server.forkServerPID, forkServer, "the fork server did not survive its spare")
        for _ in 0..<200 where ServeProcess.spares(of: forkServer).isEmpty { usleep(10_000) }
        XCTAssertEqual(ServeProcess.spares(of: forkServer).count, 1, "no new spare after the file")
    }

    func testServerExecsWorkersOnceTheForkServerIsGone() throws {
        let server = try start()
        XCTAssertEqual(cleanOnce(server).status, 200)
        let forkServer = try XCTUnwrap(server.forkServerPID, "no fork server started")
        XCTAssertEqual(kill(forkServer, SIGKILL), 0)
        for _ in 0..<200 where server.forkServerPID != nil { usleep(10_000) }
        XCTAssertNil(server.forkServerPID, "the dead fork server was not reaped")
        let result = cleanOnce(server)
        XCTAssertEqual(result.status, 200, result.bodyText + server.serverLog)
        XCTAssertEqual(result.headers["metascrub-status"], "cleaned")
        XCTAssertTrue(server.process.isRunning)
    }

    func testNoForkServerExecsEveryWorker() throws {
        let server = try start(["--no-fork-server"])
        XCTAssertNil(server.forkServerPID)
        let result = cleanOnce(server)
        XCTAssertEqual(result.status, 200, result.bodyText)
        XCTAssertEqual(result.headers["metascrub-status"], "cleaned")
    }

    /// A forked child starts from the fork server's warm-up (its own sample photos cleaned in the parent): what it
    /// answers must not depend on that. Every file gets the same bytes and the same summary as from an exec'd worker.
    func testForkedChildAnswersAsAnExecdWorker() throws {
        let forking = try start()
        XCTAssertNotNil(forking.forkServerPID, "no fork server started")
        let execing = try start(["--no-fork-server"])
        let files = ["jpeg/gps-full.jpg", "png/text.png", "heic/depth.heic", "mp4/location.mp4",
                     "audio/id3v24-ape.mp3", "pdf/report.pdf"]
        for name in files {
            let forked = Curl.post(forking.base + "/v1/clean", file: ServeProcess.fixture(name), scratch: scratch)
            let execd = Curl.post(execing.base + "/v1/clean", file: ServeProcess.fixture(name), scratch: scratch)
            XCTAssertEqual(forked.status, 200, name + ": " + forked.bodyText)
            XCTAssertEqual(forked.status, execd.status, name)
            XCTAssertEqual(forked.body, execd.body, "\(name): a forked child's output differs from an exec'd worker's")
            for header in ["metascrub-status", "metascrub-removed", "metascrub-method", "metascrub-format"] {
                XCTAssertEqual(forked.headers[header], execd.headers[header], "\(name): \(header)")
            }
        }
    }
}
