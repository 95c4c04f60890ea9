// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// Code running inside a real, confined worker (what a parser bug in FFmpeg, LibRaw, libheif or exiv2 would give
/// an attacker) tries each known escape; each must fail with the errno the sandbox layer gives. The attack is
/// Tests/WorkerAttack/worker-attack.c, built here and LD_PRELOADed into the server: it replaces usleep, which the
/// worker's stall hook calls once the sandbox is entered, so it runs exactly as confined as a parser would.
final class ServeSandboxTests: ServeTestCase {
    /// Attempt → the errno it must fail with (seccomp: EPERM; Landlock: EACCES).
    static let blocked: [String: String] = [
        "io_uring_setup": "EPERM", "socket_inet": "EPERM", "socket_unix": "EPERM", "socketpair": "EPERM",
        "connect": "EPERM", "pidfd_open": "EPERM", "pidfd_getfd": "EPERM", "ptrace_attach": "EPERM",
        "process_vm_readv": "EPERM", "proc_mem_write": "EACCES", "proc_environ_read": "EACCES",
        "kill_server": "EPERM", "kill_parent": "EPERM",
        "kill_group": "EPERM", "tgkill_server": "EPERM", "setuid_root": "EPERM",
        "read_token": "EACCES", "list_spool": "EACCES", "read_other_job": "EACCES", "write_other_job": "EACCES",
        "write_spool": "EACCES", "write_tmp": "EACCES", "read_etc_shadow": "EACCES", "symlink_in_job": "EPERM",
        "link_token": "EPERM", "chmod_token": "EPERM", "chmod_other_job": "EPERM", "utimes_token": "EPERM",
        "fork": "EPERM", "clone_process": "EPERM", "execve": "EPERM",
        "umount_spool": "EPERM", "mount_over_job": "EPERM", "unshare_namespaces": "EPERM",
        "ftruncate_own_file": "EACCES", "truncate_own_file": "EACCES", "open_trunc_own_file": "EACCES",
    ]

    func testEscapesFromAConfinedWorkerFailAsRoot() throws {
        guard geteuid() == 0 else { throw XCTSkip("the root half needs the tests to run as root") }
        try attack(asServer: nil, expectedWorkerUID: 65534)
    }

    /// The shipped container's case: the server and its workers share one uid, so only the sandbox separates them.
    func testEscapesFromAConfinedWorkerFailAsNonRoot() throws {
        guard geteuid() == 0 else { throw XCTSkip("switching to another uid needs root") }
        try attack(asServer: (1000, 1000), expectedWorkerUID: 1000)
    }

    /// The same attack on a job in the disk spool (the memory spool off), where larger uploads wait.
    func testEscapesFromAConfinedWorkerFailOnTheDiskSpool() throws {
        guard geteuid() == 0 else { throw XCTSkip("the root half needs the tests to run as root") }
        try attack(asServer: nil, expectedWorkerUID: 65534, spool: .disk)
    }

    /// The same attack where a root server spools by default: on a tmpfs of its own, in its own mount namespace.
    func testEscapesFromAConfinedWorkerFailOnTheServersOwnTmpfs() throws {
        guard geteuid() == 0, Self.mayMountTmpfs else {
            throw XCTSkip("a server's own tmpfs needs root with CAP_SYS_ADMIN and transparent huge pages")
        }
        try attack(asServer: nil, expectedWorkerUID: 65534, spool: .serversOwnTmpfs)
    }

    /// Where the attacking worker's job waits: the memory spool the test names, the disk spool, or the tmpfs a
    /// root server mounts over /dev/shm when none is named (seen here through the server's /proc root).
    private enum Spool { case named, disk, serversOwnTmpfs }

    private func attack(asServer user: (uid: UInt32, gid: UInt32)?, expectedWorkerUID: UInt32,
                        spool: Spool = .named) throws {
        let library = scratch + "/worker-attack.so"
        let source = ServeProcess.repo.appendingPathComponent("Tests/WorkerAttack/worker-attack.c").path
        let cc = Curl.run(["-shared", "-fPIC", "-O1", "-o", library, source, "-ldl"], executable: "/usr/bin/cc")
        XCTAssertEqual(cc.status, 0, cc.stderr)
        chmod(scratch, 0o755)
        let token = scratch + "/token"
        FileManager.default.createFile(atPath: token, contents: Data("attack-test-token-0123456789\n".utf8))
        chmod(token, 0o600)
        let serverDirectory = scratch + "/server-\(servers.count)"
        try FileManager.default.createDirectory(atPath: serverDirectory, withIntermediateDirectories: true)
        if let user {
            chown(token, user.uid, user.gid)
            chown(serverDirectory, user.uid, user.gid)
        }
        let escape = "/tmp/metascrub-attack-escape"
        unlink(escape)
        let (listener, port) = try Self.loopbackListener()
        defer { close(listener) }
        let spoolChoice = spool == .disk ? ["--memory-spool-bytes", "0"] : []
        let server = try start(["--token-file", token] + spoolChoice, stallMs: 1, environment: [
            "LD_PRELOAD": library, "METASCRUB_ATTACK": "1", "METASCRUB_ATTACK_PORT": String(port),
            "METASCRUB_ATTACK_TOKEN": token,
        ], user: user, defaultMemorySpool: spool == .serversOwnTmpfs)
        let view = spool == .serversOwnTmpfs ? "/proc/\(server.process.processIdentifier)/root" : ""
        if spool == .serversOwnTmpfs {
            XCTAssertTrue(server.serverLog.contains("on a private tmpfs"), server.serverLog)
        }
        let spoolPath = switch spool {
        case .named: server.memorySpool
        case .disk: server.spool
        case .serversOwnTmpfs: view + "/dev/shm"
        }
        // Another request's folder, as the workers' uid owns it: the attacker must neither read nor rewrite it. In
        // the spool where the attacker's own upload waits (`folder` as this test reaches it, `serverFolder` as the
        // server and its workers name it).
        let folder = try XCTUnwrap(server.serverFolders(in: spoolPath).first)
        let serverFolder = String(folder.dropFirst(view.count))
        let planted = folder + "/job-planted"
        try FileManager.default.createDirectory(atPath: planted, withIntermediateDirectories: false)
        FileManager.default.createFile(atPath: planted + "/input", contents: Data("another client's upload".utf8))
        let owner = user?.uid ?? expectedWorkerUID
        chown(planted, owner, owner)
        chown(planted + "/input", owner, owner)
        chmod(planted, 0o700)

        // Two files: the second one's worker is forked after the fork server read the first one's job.
        for _ in 0..<2 {
            let result = Curl.post(server.base + "/v1/clean", file: ServeProcess.fixture("jpeg/gps-full.jpg"),
                                   extra: ["-H", "Authorization: Bearer attack-test-token-0123456789"],
                                   scratch: scratch)
            XCTAssertEqual(result.status, 200, result.bodyText + server.serverLog)
        }
        XCTAssertTrue(server.process.isRunning, "the worker killed the server")
        let lines = server.serverLog.split(separator: "\n").filter { $0.hasPrefix("metascrub-attack ") }
        XCTAssertTrue(lines.contains("metascrub-attack done"), "the attack did not run: \(server.serverLog)")
        let job = server.serverLog.split(separator: "\n").first { $0.hasPrefix("metascrub-attack-job ") }
        // The server forks workers from its fork server: the attack ran in a forked child, not an exec'd worker.
        XCTAssertTrue(server.serverLog.contains("metascrub-attack-worker forked"),
                      "not a forked worker: \(server.serverLog)")
        XCTAssertTrue(job?.hasPrefix("metascrub-attack-job \(serverFolder)/job-") == true,
                      "attack aimed wrong: \(job ?? "")")
        var outcomes: [String: (rc: String, errno: String)] = [:]
        for line in lines {
            let fields = line.split(separator: " ")
            guard fields.count == 4 else { continue }
            outcomes[String(fields[1])] = (String(fields[2].dropFirst(3)), String(fields[3].dropFirst(6)))
        }
        for (name, errno) in Self.blocked {
            let outcome = try XCTUnwrap(outcomes[name], "\(name) was not tried")
            XCTAssertEqual(outcome.rc, "-1", "\(name) succeeded inside the sandbox")
            XCTAssertEqual(outcome.errno, errno, name)
        }
        XCTAssertEqual(outcomes["write_own_job"]?.errno, "0", "the worker could not write in its own folder")
        XCTAssertEqual(outcomes["kill_self"]?.rc, "0", "the worker could not signal itself")
        XCTAssertEqual(outcomes["tgkill_self"]?.rc, "0", "the worker could not signal its own thread")
        let identity = try XCTUnwrap(lines.first { $0.hasPrefix("metascrub-attack identity") })
        XCTAssertTrue(identity.contains("uid=\(expectedWorkerUID) euid=\(expectedWorkerUID) "), String(identity))
        XCTAssertTrue(identity.hasSuffix("capeff=000000000 capprm=000000000"), String(identity))
        // Emptied once in the fork server when it runs as root; a non-root server has no CAP_SETPCAP to empty it.
        if user == nil { XCTAssertTrue(identity.contains(" capbnd=0 "), String(identity)) }
        // Nothing of another request's job (its folder, the size its limits were set from) in a worker's memory;
        // its own job is found there, so the scan looked where jobs are.
        let memory = lines.filter { $0.hasPrefix("metascrub-attack jobs-in-memory ") }
        XCTAssertEqual(memory, Array(repeating: "metascrub-attack jobs-in-memory own=1 other=0", count: 2))
        XCTAssertEqual(FileManager.default.contents(atPath: planted + "/input"), Data("another client's upload".utf8))
        XCTAssertFalse(FileManager.default.fileExists(atPath: escape))
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder + "/escape"))
    }

    /// A TCP listener on loopback the worker must not reach.
    static func loopbackListener() throws -> (Int32, Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = ServeProcess.loopback()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ready = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 4) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard ready else { throw NSError(domain: "serve", code: 3) }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }
}
