// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// Where an upload waits for its worker: small ones of known length in the memory spool, within its budget; the
/// rest in the disk spool. Seen while a stalled worker holds the job, and checked with exiftool on the answer.
final class ServeSpoolTests: ServeTestCase {
    /// The spool (memory or disk) holding the one job in flight, once its worker runs; the answer.
    private func spoolOfJob(_ server: ServeProcess,
                            extra: [String] = []) throws -> (memory: Int, disk: Int, CurlResult) {
        let pending = Curl.start(server.base + "/v1/clean", file: ServeProcess.fixture("jpeg/gps-full.jpg"),
                                 extra: extra, scratch: scratch)
        _ = try XCTUnwrap(server.waitForWorker(), "no worker started")
        let memory = server.jobs(in: server.memorySpool).count, disk = server.jobs(in: server.spool).count
        let result = pending.finish()
        XCTAssertEqual(result.status, 200, result.bodyText)
        XCTAssertEqual(server.spoolJobs, [], "a job folder outlived its request")
        return (memory, disk, result)
    }

    func testASmallUploadWaitsInMemory() throws {
        let server = try start(stallMs: 600)
        XCTAssertTrue(server.serverLog.contains("memory spool"), server.serverLog)
        let (memory, disk, result) = try spoolOfJob(server)
        XCTAssertEqual(memory, 1, "the job was not in the memory spool")
        XCTAssertEqual(disk, 0)
        let cleaned = write(result.body, "cleaned.jpg")
        XCTAssertFalse(exifKeys(cleaned).isEmpty, "exiftool read nothing")
        XCTAssertFalse(exifKeys(cleaned).contains { $0.contains("GPS") }, "GPS came back")
    }

    /// Past the budget (each upload counts twice: it and its cleaned copy), the disk spool takes the job.
    func testAnUploadPastTheBudgetWaitsOnDisk() throws {
        let size = try XCTUnwrap(try FileManager.default.attributesOfItem(
            atPath: ServeProcess.fixture("jpeg/gps-full.jpg"))[.size] as? Int)
        let server = try start(["--memory-spool-bytes", String(2 * size - 1)], stallMs: 600)
        let (memory, disk, _) = try spoolOfJob(server)
        XCTAssertEqual(memory, 0, "the memory spool took more than its budget")
        XCTAssertEqual(disk, 1)
    }

    /// A body of unknown length (chunked) cannot be budgeted before it arrives: on disk.
    func testAChunkedUploadWaitsOnDisk() throws {
        let server = try start(stallMs: 600)
        let (memory, disk, _) = try spoolOfJob(server, extra: ["-H", "Transfer-Encoding: chunked"])
        XCTAssertEqual(memory, 0, "a body of unknown length went to memory")
        XCTAssertEqual(disk, 1)
    }

    func testMemorySpoolOffKeepsEveryJobOnDisk() throws {
        let server = try start(["--memory-spool-bytes", "0"], stallMs: 600)
        XCTAssertTrue(server.serverLog.contains("memory spool off"), server.serverLog)
        let (memory, disk, _) = try spoolOfJob(server)
        XCTAssertEqual(memory, 0)
        XCTAssertEqual(disk, 1)
    }
}
