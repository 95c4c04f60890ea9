// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// Admission that slow clients cannot hold, honest statuses while draining, gauges that tell the truth.
final class ServeAdmissionTests: ServeTestCase {
    /// A client that sends its headers and then one byte every `interval` seconds (python3, raw socket); prints
    /// the status line it finally gets, if any.
    func slowUpload(_ server: ServeProcess, interval: Double, seconds: Double) throws -> Process {
        let script = """
            import socket, sys, time
            s = socket.create_connection(("127.0.0.1", \(server.port)))
            s.sendall(b"POST /v1/clean HTTP/1.1\\r\\nHost: x\\r\\nContent-Type: image/jpeg\\r\\nContent-Length: 100000\\r\\n\\r\\n")
            s.settimeout(\(interval))
            end = time.time() + \(seconds)
            while time.time() < end:
                try:
                    s.sendall(b"\\xff")
                    data = s.recv(200)
                    if data:
                        print(data.split(b"\\r\\n")[0].decode()); sys.exit(0)
                except socket.timeout:
                    pass
                except OSError:
                    print("closed"); sys.exit(0)
            print("still-open")
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", script]
        process.standardOutput = Pipe()
        try process.run()
        return process
    }

    func output(_ process: Process) -> String {
        let data = (process.standardOutput as! Pipe).fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `workers + queue` clients trickling a byte every few seconds hold upload slots only: a normal request is
    /// still answered, within a second.
    func testSlowUploadsDoNotLockOthersOut() throws {
        let metricsPort = try ServeProcess.freePort()
        let server = try start(["--workers", "1", "--queue", "1", "--upload-grace", "60", "--metrics", "127.0.0.1:\(metricsPort)"])
        let slow = try (0..<2).map { _ in try slowUpload(server, interval: 3, seconds: 8) }
        var uploading = 0.0
        for _ in 0..<100 where uploading < 2 {
            usleep(50_000)
            uploading = Self.gauges(port: metricsPort)["metascrub_uploads_in_progress"] ?? 0
        }
        XCTAssertEqual(uploading, 2, "the slow uploads are not in progress")
        // Each is answered (never 429); the fastest of three within a second (the shared test machine's load makes
        // a single run's time noisy; a request locked out would wait for the slow uploads, seconds).
        var times: [TimeInterval] = []
        for _ in 0..<3 {
            let started = Date()
            let result = Curl.post(server.base + "/v1/clean", file: ServeProcess.fixture("jpeg/gps-full.jpg"), scratch: scratch)
            XCTAssertEqual(result.status, 200, result.bodyText)
            times.append(Date().timeIntervalSince(started))
        }
        XCTAssertLessThan(times.min() ?? 99, 1.0, "\(times)")
        XCTAssertEqual(Self.gauges(port: metricsPort)["metascrub_uploads_in_progress"], 2, "a slow upload was dropped early")
        for process in slow { process.terminate() }
    }

    /// Slower than the minimum upload rate after the grace period: 408, the upload slot given back.
    func testTooSlowUploadIsCut() throws {
        let metricsPort = try ServeProcess.freePort()
        let server = try start(["--min-upload-rate", "1K", "--upload-grace", "1", "--metrics", "127.0.0.1:\(metricsPort)"])
        let started = Date()
        let slow = try slowUpload(server, interval: 0.5, seconds: 10)
        XCTAssertEqual(output(slow), "HTTP/1.1 408 Request Timeout")
        XCTAssertLessThan(Date().timeIntervalSince(started), 5)
        var jobs = server.spoolJobs
        for _ in 0..<50 where !jobs.isEmpty {
            usleep(50_000)
            jobs = server.spoolJobs
        }
        XCTAssertEqual(jobs, [])
        XCTAssertEqual(Self.gauges(port: metricsPort)["metascrub_uploads_in_progress"], 0)
    }

    /// SIGTERM: /readyz is 503 at once while the listener still answers; it closes after the grace period.
    func testSIGTERMTurnsReadinessOffBeforeClosing() throws {
        let server = try start(["--drain-grace", "2"])
        XCTAssertEqual(Curl.get(server.base + "/readyz", scratch: scratch).status, 200)
        let signalled = Date()
        kill(server.process.processIdentifier, SIGTERM)
        usleep(300_000)
        XCTAssertEqual(Curl.get(server.base + "/readyz", scratch: scratch).status, 503)
        let during = Curl.post(server.base + "/v1/clean", file: ServeProcess.fixture("jpeg/gps-full.jpg"), scratch: scratch)
        XCTAssertEqual(during.status, 200, "a request in the grace period is still served")
        server.process.waitUntilExit()
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(signalled), 2)
        XCTAssertEqual(server.process.terminationStatus, 0, server.serverLog)
    }

    /// A spool with room for the upload but not for the cleaned copy: the server's fault, so 503 with Retry-After
    /// (a client's upload hook must retry, not reject the file for good).
    func testFullSpoolIs503WithRetryAfter() throws {
        guard geteuid() == 0 else { throw XCTSkip("mounting a small tmpfs needs root") }
        let image = scratch + "/big.jpg"
        XCTAssertEqual(Curl.run(["-size", "1200x1200", "xc:", "+noise", "Random", "-quality", "92", image],
                                executable: "/usr/bin/convert").status, 0)
        XCTAssertEqual(Curl.run(["-q", "-overwrite_original", "-GPSLatitude=48.85", "-GPSLongitude=2.35", image],
                                executable: "/usr/bin/exiftool").status, 0)
        let size = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: image)[.size] as? Int)
        let spool = scratch + "/small-spool"
        try FileManager.default.createDirectory(atPath: spool, withIntermediateDirectories: true)
        let mounted = Curl.run(["-t", "tmpfs", "-o", "size=\(size + 300_000)", "tmpfs", spool], executable: "/usr/bin/mount")
        XCTAssertEqual(mounted.status, 0, mounted.stderr)
        defer { _ = Curl.run([spool], executable: "/usr/bin/umount") }
        // Without the memory spool, which would hold this upload instead.
        let server = try start(["--spool", spool, "--memory-spool-bytes", "0"])
        let result = Curl.post(server.base + "/v1/clean", file: image, scratch: scratch)
        XCTAssertEqual(result.status, 503, result.bodyText)
        XCTAssertEqual(result.headers["retry-after"], "1")
        XCTAssertNil(result.body.range(of: Data("GPS".utf8)))
        server.stop()
    }

    /// Gauges are read when scraped: zero once idle, however the last request ended.
    func testGaugesAreZeroWhenIdle() throws {
        let port = try ServeProcess.freePort()
        let server = try start(["--metrics", "127.0.0.1:\(port)"])
        _ = Curl.post(server.base + "/v1/clean", file: ServeProcess.fixture("jpeg/gps-full.jpg"), scratch: scratch)
        _ = Curl.post(server.base + "/v1/clean", file: ServeProcess.fixture("jpeg/bad/truncated-header.jpg"), scratch: scratch)
        let gauges = Self.gauges(port: port)
        for name in ["metascrub_requests_admitted", "metascrub_workers_running", "metascrub_uploads_in_progress", "metascrub_requests_queued"] {
            XCTAssertEqual(gauges[name], 0, name)
        }
    }

    /// The gauges (and every other unlabelled sample) from a metrics listener.
    static func gauges(port: Int) -> [String: Double] {
        let text = Curl.run(["-s", "http://127.0.0.1:\(port)/metrics"]).stdout
        var values: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: " ")
            if parts.count == 2, let value = Double(parts[1]) { values[String(parts[0])] = value }
        }
        return values
    }
}
