// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// The cleaned file goes to the client straight from the spool (sendfile): byte for byte what the CLI writes, from
/// either spool, alone or after the report; and a client that hangs up during the download frees its job.
final class ServeResponseTests: ServeTestCase {
    /// A WAV of about 10 MB made by ffmpeg with tags to remove: larger than a socket's buffers, so sending it takes
    /// many writes.
    private func bigWave() throws -> String {
        let path = scratch + "/big.wav"
        let made = Curl.run(["-v", "error", "-f", "lavfi", "-i", "sine=frequency=440:duration=60", "-ar", "44100",
                             "-ac", "2", "-metadata", "artist=Canary Artist",
                             "-metadata", "comment=/home/alice/take.wav",
                             "-y", path], executable: "/usr/bin/ffmpeg")
        XCTAssertEqual(made.status, 0, made.stderr)
        return path
    }

    private func cleanedByTheCLI(_ path: String) throws -> Data {
        let output = scratch + "/cli-" + URL(fileURLWithPath: path).lastPathComponent
        let run = Curl.run(["clean", path, "-o", output, "--policy", "strict"], executable: ServeProcess.binary)
        XCTAssertEqual(run.status, 0, run.stderr)
        return try Data(contentsOf: URL(fileURLWithPath: output))
    }

    func testTheCleanedFileArrivesWholeFromEitherSpool() throws {
        let wave = try bigWave()
        let expected = try cleanedByTheCLI(wave)
        XCTAssertGreaterThan(expected.count, 4 << 20)
        for (arguments, spool) in [([String](), "memory"), (["--memory-spool-bytes", "0"], "disk")] {
            let server = try start(arguments)
            let alone = Curl.post(server.base + "/v1/clean?policy=strict", file: wave, scratch: scratch)
            XCTAssertEqual(alone.status, 200, "\(spool): \(alone.bodyText.prefix(300))")
            XCTAssertEqual(alone.body, expected, "\(spool): the answer is not the CLI's cleaned file")
            let tags = Curl.run(["-v", "error", "-show_entries", "format_tags", "-of", "json",
                                 write(alone.body, "a.wav")], executable: "/usr/bin/ffprobe")
            XCTAssertFalse(tags.stdout.contains("Canary") || tags.stdout.contains("alice"), "\(spool): \(tags.stdout)")
            // With the report first: the file is the multipart body's second part, whole, before the last boundary.
            let both = Curl.post(server.base + "/v1/clean?policy=strict&report=json", file: wave, scratch: scratch)
            XCTAssertEqual(both.status, 200, "\(spool): \(both.bodyText.prefix(300))")
            let part = try XCTUnwrap(both.body.range(of: expected), "\(spool): the file is not whole in the multipart")
            XCTAssertTrue(both.body[part.upperBound...].starts(with: Data("\r\n--metascrub-".utf8)), spool)
            XCTAssertEqual(server.spoolJobs, [], "\(spool): a job outlived its request")
        }
    }

    /// strace, attached to the server while it answers, sees the cleaned file leave in `sendfile` calls that add up
    /// to its size: the file is not read back into the server's buffers (a fallback to streaming would be silent).
    func testTheCleanedFileLeavesBySendfile() throws {
        let strace = "/usr/bin/strace"
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: strace),
                      "oracle missing: strace (scripts/install-deps)")
        let wave = try bigWave()
        let expected = try cleanedByTheCLI(wave)
        let server = try start()
        let pid = server.process.processIdentifier
        let log = scratch + "/strace.log"
        let tracer = Process()
        tracer.executableURL = URL(fileURLWithPath: strace)
        tracer.arguments = ["-f", "-qq", "-e", "trace=sendfile", "-e", "signal=none", "-o", log, "-p", String(pid)]
        try tracer.run()
        defer { if tracer.isRunning { kill(tracer.processIdentifier, SIGKILL) } }
        // Every thread of the server traced before the request.
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, !Self.everyThreadTraced(pid) { usleep(20_000) }
        XCTAssertTrue(Self.everyThreadTraced(pid), "strace did not attach")
        let result = Curl.post(server.base + "/v1/clean?policy=strict", file: wave, scratch: scratch)
        XCTAssertEqual(result.status, 200, result.bodyText.prefix(300) + server.serverLog)
        XCTAssertEqual(result.body, expected, "the answer is not the CLI's cleaned file")
        kill(tracer.processIdentifier, SIGINT)
        tracer.waitUntilExit()
        let calls = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
            .filter { $0.contains("sendfile") }
        // A call's result ends its line ("= 65536"); a failed one ("= -1 EAGAIN (…)") and an unfinished one do not.
        let sent = calls.compactMap { line in line.split(separator: " ").last.flatMap { Int($0) } }.reduce(0, +)
        XCTAssertEqual(sent, expected.count, "bytes sent by sendfile; calls: \(calls.prefix(5))")
    }

    /// Whether every thread of `pid` has a tracer.
    private static func everyThreadTraced(_ pid: pid_t) -> Bool {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return !tasks.isEmpty && tasks.allSatisfy { task in
            let status = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8)) ?? ""
            return status.split(separator: "\n").contains { $0.hasPrefix("TracerPid:") && !$0.hasSuffix("\t0") }
        }
    }

    /// With room in memory for one job only, a client that reads the answer's first bytes and hangs up leaves
    /// neither its files nor its share of the budget behind: the next upload waits in memory again.
    func testAClientThatHangsUpMidDownloadFreesItsJob() throws {
        let wave = try bigWave()
        let size = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: wave)[.size] as? Int)
        let server = try start(["--memory-spool-bytes", String(3 * size)], stallMs: 400)
        for round in 0..<2 {
            let head = try hangUpAfterTheHead(port: server.port, path: "/v1/clean?policy=strict", body: wave)
            XCTAssertTrue(head.hasPrefix("HTTP/1.1 200"), "round \(round): \(head.prefix(200))")
            XCTAssertEqual(server.spoolJobs, [], "round \(round): the job outlived a client that hung up")
        }
        let pending = Curl.start(server.base + "/v1/clean?policy=strict", file: wave, scratch: scratch)
        _ = try XCTUnwrap(server.waitForWorker(), "no worker started")
        XCTAssertEqual(server.jobs(in: server.memorySpool).count, 1, "the budget did not come back")
        XCTAssertEqual(pending.finish().status, 200)
    }

    /// A file that shrinks while it is being sent (something with write access to the spool truncates it: a worker
    /// may not, where Landlock can say so) ends that response within a moment: the connection is closed, the server
    /// does not spin on the file's end, and the job goes.
    func testAFileThatShrinksWhileSentClosesTheConnection() throws {
        let wave = try bigWave()
        let server = try start()
        let connection = try startRequest(port: server.port, path: "/v1/clean?policy=strict", body: wave)
        defer { close(connection.fd) }
        XCTAssertTrue(connection.head.hasPrefix("HTTP/1.1 200"), String(connection.head.prefix(200)))
        let output = try XCTUnwrap(server.jobs(in: server.memorySpool).first) + "/output"
        XCTAssertEqual(truncate(output, 0), 0, "could not truncate \(output)")
        let cpuBefore = Self.cpuSeconds(server.process.processIdentifier)
        let started = Date()
        var received = connection.bodyBytes
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(connection.fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        while true {
            let n = recv(connection.fd, &buffer, buffer.count, 0)
            guard n > 0 else { break }
            received += n
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 3, "the connection stayed open")
        let size = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: wave)[.size] as? Int)
        XCTAssertLessThan(received, size - (1 << 20), "the whole file arrived after it was truncated")
        XCTAssertLessThan(Self.cpuSeconds(server.process.processIdentifier) - cpuBefore, 1.0, "the server spun")
        XCTAssertEqual(server.spoolJobs, [], "the job outlived its closed connection")
    }

    private static func cpuSeconds(_ pid: pid_t) -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return 0 }
        let fields = stat[stat.index(close, offsetBy: 2)...].split(separator: " ")
        return Double((Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0)) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Sends a POST with `body` on a connection with a small receive window and reads the answer's head (and what
    /// came with it), leaving the rest unread.
    private func startRequest(port: Int, path: String, body: String) throws
        -> (fd: Int32, head: String, bodyBytes: Int) {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: body))
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        XCTAssertGreaterThanOrEqual(fd, 0)
        // A small receive window, so the server is still sending when the client stops reading.
        var window: Int32 = 16 << 10
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &window, socklen_t(MemoryLayout<Int32>.size))
        var address = ServeProcess.loopback(port: port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        XCTAssertEqual(connected, 0)
        let head = "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \(bytes.count)\r\n\r\n"
        let request = Data(head.utf8) + bytes
        var sent = 0
        while sent < request.count {
            let n = request.withUnsafeBytes { send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else {
                close(fd)
                throw POSIXError(.EPIPE)
            }
            sent += n
        }
        var received = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while received.range(of: Data("\r\n\r\n".utf8)) == nil {
            let n = recv(fd, &buffer, buffer.count, 0)
            guard n > 0 else { break }
            received.append(contentsOf: buffer[0..<n])
        }
        let end = received.range(of: Data("\r\n\r\n".utf8))?.upperBound ?? received.endIndex
        return (fd, String(decoding: received[..<end], as: UTF8.self), received.endIndex - end)
    }

    /// Sends a POST with `body`, reads the answer's head and closes with the rest unread.
    private func hangUpAfterTheHead(port: Int, path: String, body: String) throws -> String {
        let connection = try startRequest(port: port, path: path, body: body)
        close(connection.fd)
        return connection.head
    }
}
