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
    private func spoolOfJob(_ server: ServeProcess, extra: [String] = [],
                            memorySpool: String? = nil) throws -> (memory: Int, disk: Int, CurlResult) {
        let pending = Curl.start(server.base + "/v1/clean", file: ServeProcess.fixture("jpeg/gps-full.jpg"),
                                 extra: extra, scratch: scratch)
        _ = try XCTUnwrap(server.waitForWorker(), "no worker started")
        let memory = server.jobs(in: memorySpool ?? server.memorySpool).count
        let disk = server.jobs(in: server.spool).count
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

    /// As root, the default memory spool is a tmpfs of the server's own over /dev/shm, with large folios: only the
    /// server's processes see it (the job is there for them, never in the host's /dev/shm), and the server leaves
    /// no folder in the host's.
    func testTheDefaultMemorySpoolIsATmpfsOfTheServersOwn() throws {
        guard Self.mayMountTmpfs else {
            throw XCTSkip("mounting a tmpfs needs CAP_SYS_ADMIN and transparent huge pages")
        }
        let server = try start(stallMs: 600, defaultMemorySpool: true)
        XCTAssertTrue(server.serverLog.contains("on a private tmpfs"), server.serverLog)
        let pid = server.process.processIdentifier
        let mounts = try String(contentsOfFile: "/proc/\(pid)/mountinfo", encoding: .utf8)
        let spoolMount = mounts.split(separator: "\n").last { $0.split(separator: " ")[4] == "/dev/shm" }
        XCTAssertTrue(spoolMount?.contains("tmpfs metascrub-spool") == true, "\(spoolMount ?? "no /dev/shm")")
        XCTAssertTrue(spoolMount?.contains("huge=within_size") == true, "\(spoolMount ?? "")")
        XCTAssertTrue(spoolMount?.contains("noexec") == true, "\(spoolMount ?? "")")
        // Twice the default budget of 64 MiB: what workers can fill in memory is bounded by it.
        XCTAssertTrue(spoolMount?.contains("size=131072k") == true, "\(spoolMount ?? "")")
        let own = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/ns/mnt")
        XCTAssertNotEqual(own, try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/ns/mnt"))
        // The host's /dev/shm: where the server's folder would be without its own tmpfs.
        let hostHome = "/dev/shm/metascrub-\(geteuid())"
        let serverFolder = { (home: String) in
            ((try? FileManager.default.contentsOfDirectory(atPath: home)) ?? []).filter {
                $0.hasPrefix("metascrub-serve-\(pid)-")
            }
        }
        let (memory, disk, result) = try spoolOfJob(server, memorySpool: "/proc/\(pid)/root/dev/shm")
        XCTAssertEqual(memory, 1, "the job was not in the server's tmpfs")
        XCTAssertEqual(disk, 0)
        XCTAssertEqual(serverFolder(hostHome), [], "the server's folder is in the host's /dev/shm")
        let cleaned = write(result.body, "cleaned.jpg")
        XCTAssertFalse(exifKeys(cleaned).isEmpty, "exiftool read nothing")
        XCTAssertFalse(exifKeys(cleaned).contains { $0.contains("GPS") }, "GPS came back")
        server.stop()
        XCTAssertEqual(serverFolder(hostHome), [], "the server left a folder in the host's /dev/shm")
    }

    /// A server that may not mount (not root, as the shipped container runs it) spools in the host's /dev/shm as
    /// before, and its start line says why.
    func testANonRootServerSpoolsInTheHostsDevShm() throws {
        guard geteuid() == 0 else { throw XCTSkip("switching to another uid needs root") }
        chmod(scratch, 0o755)
        let server = try start(stallMs: 600, user: (1000, 1000), defaultMemorySpool: true)
        XCTAssertTrue(server.serverLog.contains("(no private tmpfs: Operation not permitted)"), server.serverLog)
        let (memory, disk, result) = try spoolOfJob(server, memorySpool: "/dev/shm")
        XCTAssertEqual(memory, 1, "the job was not in the host's /dev/shm")
        XCTAssertEqual(disk, 0)
        XCTAssertFalse(exifKeys(write(result.body, "cleaned.jpg")).contains { $0.contains("GPS") }, "GPS came back")
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

    /// Each job's share comes back when its request ends, however it ended: with room for one 8 MB upload only, an
    /// aborted upload and then a finished request leave room for the next.
    func testTheBudgetComesBackWhenARequestEnds() throws {
        let big = scratch + "/big.bin"
        FileManager.default.createFile(atPath: big, contents: Data(count: 8 << 20))
        let server = try start(["--memory-spool-bytes", String(16 << 20)], stallMs: 400)
        let aborted = Curl.run(["-s", "-o", "/dev/null", "-X", "POST", "--data-binary", "@" + big, "--limit-rate", "1M",
                                "--max-time", "1", server.base + "/v1/clean"])
        XCTAssertEqual(aborted.status, 28, "curl should have timed out mid-upload")
        for _ in 0..<100 where !server.spoolJobs.isEmpty { usleep(50_000) }
        for round in 0..<2 {
            let (memory, disk, _) = try spoolOfJob(server)
            XCTAssertEqual(memory, 1, "round \(round): the budget was not given back")
            XCTAssertEqual(disk, 0)
        }
    }

    /// What a killed server left in the memory spool is removed by the next one; a folder whose server still holds
    /// its lock is not, whatever its PID says.
    func testADeadServersFolderIsSweptAndALiveOneKept() throws {
        let parent = "/dev/shm/metascrub-test-" + UUID().uuidString
        let home = parent + "/metascrub-\(geteuid())"
        defer { try? FileManager.default.removeItem(atPath: parent) }
        // Past any PID the kernel hands out (pid_max is at most 2^22): its process is surely gone.
        let dead = home + "/metascrub-serve-4194305-dead", held = home + "/metascrub-serve-4194305-held"
        for folder in [dead + "/job-x", held + "/job-y"] {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            FileManager.default.createFile(atPath: folder + "/input", contents: Data("an upload".utf8))
        }
        chmod(home, 0o700)
        let lock = open(held, O_RDONLY | O_DIRECTORY)
        defer { close(lock) }
        XCTAssertEqual(flock(lock, LOCK_EX | LOCK_NB), 0)
        let server = try start(["--memory-spool", parent])
        XCTAssertFalse(FileManager.default.fileExists(atPath: dead), "a dead server's folder was left")
        XCTAssertTrue(FileManager.default.fileExists(atPath: held + "/job-y/input"),
                      "a live server's folder was removed")
        server.stop()
    }

    /// A memory spool whose file system others filled: the upload goes to the disk spool instead of failing there.
    func testAFullMemorySpoolSendsTheUploadToDisk() throws {
        guard geteuid() == 0 else { throw XCTSkip("mounting a small tmpfs needs root") }
        let small = scratch + "/small-shm"
        try FileManager.default.createDirectory(atPath: small, withIntermediateDirectories: true)
        let mounted = Curl.run(["-t", "tmpfs", "-o", "size=1M", "tmpfs", small], executable: "/usr/bin/mount")
        XCTAssertEqual(mounted.status, 0, mounted.stderr)
        defer { _ = Curl.run([small], executable: "/usr/bin/umount") }
        let server = try start(["--memory-spool", small], stallMs: 300)
        // Someone else's file leaves one page, less than the upload and its cleaned copy need.
        FileManager.default.createFile(atPath: small + "/other", contents: Data(count: (1 << 20) - 4096))
        let (memory, disk, _) = try spoolOfJob(server, memorySpool: small)
        XCTAssertEqual(memory, 0, "the job went to a full memory spool")
        XCTAssertEqual(disk, 1)
        server.stop()
    }

    /// Someone else's `metascrub-<uid>` in a shared folder neither keeps the server from starting nor is swept.
    func testSomeoneElsesFolderIsLeftAndTheServerStarts() throws {
        guard geteuid() == 0 else { throw XCTSkip("planting a folder of another user's needs root") }
        let parent = scratch + "/shared"
        let planted = parent + "/metascrub-0/metascrub-serve-4194305-dead"
        try FileManager.default.createDirectory(atPath: planted, withIntermediateDirectories: true)
        chmod(parent, 0o1777)
        chown(parent + "/metascrub-0", 65534, 65534)
        let server = try start(["--spool", parent, "--memory-spool-bytes", "0"])
        // Its folder went in the shared folder itself.
        let beside = try FileManager.default.contentsOfDirectory(atPath: parent)
        XCTAssertTrue(beside.contains { $0.hasPrefix("metascrub-serve-") }, "\(beside)")
        let result = Curl.post(server.base + "/v1/clean", file: ServeProcess.fixture("jpeg/gps-full.jpg"),
                               scratch: scratch)
        XCTAssertEqual(result.status, 200, result.bodyText + server.serverLog)
        XCTAssertTrue(FileManager.default.fileExists(atPath: planted), "a folder of someone else's was swept")
        server.stop()
    }
}
