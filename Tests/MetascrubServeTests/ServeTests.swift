// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// `metascrub serve` end to end (issue 27): the real binary on a loopback port, real HTTP (curl), independent
/// oracles (exiftool, djpeg, ffmpeg) on what comes back.
final class ServeTests: ServeTestCase {
    // MARK: cleaning

    func testCleanJPEGRemovesGPSAndKeepsPixels() throws {
        let server = try start()
        let input = ServeProcess.fixture("jpeg/gps-full.jpg")
        XCTAssertTrue(exifKeys(input).contains { $0.hasPrefix("GPS:") }, "fixture has no GPS")
        let result = Curl.post(server.base + "/v1/clean", file: input, extra: ["-H", "Content-Type: image/jpeg"], scratch: scratch)
        XCTAssertEqual(result.status, 200, result.bodyText)
        XCTAssertEqual(result.headers["metascrub-status"], "cleaned")
        XCTAssertTrue(result.headers["metascrub-removed"]?.contains("location=") == true, "\(result.headers)")
        XCTAssertEqual(result.headers["metascrub-method"], "remux")
        XCTAssertEqual(result.headers["content-type"], "image/jpeg")
        let output = write(result.body, "cleaned.jpg")
        let keys = exifKeys(output)
        XCTAssertFalse(keys.isEmpty, "exiftool read nothing")
        XCTAssertFalse(keys.contains { $0.hasPrefix("GPS:") || $0.contains("GPS") }, "\(keys)")
        XCTAssertFalse(result.bodyText.contains("CANARY"))
        let before = Curl.run(["-ppm", input], executable: "/usr/bin/djpeg")
        let after = Curl.run(["-ppm", output], executable: "/usr/bin/djpeg")
        XCTAssertEqual(before.status, 0)
        XCTAssertFalse(before.stdout.isEmpty)
        XCTAssertEqual(before.stdout, after.stdout, "decoded pixels differ")
        XCTAssertEqual(server.spoolJobs, [], "spool not emptied")
    }

    func testCleanWithJSONReportAsMultipart() throws {
        let server = try start()
        let result = Curl.post(server.base + "/v1/clean?report=json&policy=strict", file: ServeProcess.fixture("jpeg/gps-full.jpg"), scratch: scratch)
        XCTAssertEqual(result.status, 200, result.bodyText)
        let type = try XCTUnwrap(result.headers["content-type"])
        XCTAssertTrue(type.hasPrefix("multipart/mixed; boundary="), type)
        let boundary = String(type.dropFirst("multipart/mixed; boundary=".count))
        let parts = result.body.split(separator: Data("--\(boundary)".utf8))
        XCTAssertEqual(parts.count, 3, "report, file, closing")
        let report = String(decoding: parts[0], as: UTF8.self)
        XCTAssertTrue(report.contains("\"schema_version\""), report)
        XCTAssertTrue(report.contains("\"status\" : \"cleaned\""), report)
        XCTAssertFalse(report.contains(server.spool) || report.contains(server.memorySpool),
                       "server paths leak into the report")
        XCTAssertTrue(String(decoding: parts[1].prefix(120), as: UTF8.self).contains("Content-Type: application/octet-stream"))
    }

    func testCleanMP4WithSEIInEveryFrameKeepsFrames() throws {
        let server = try start()
        let input = ServeProcess.fixture("mp4/sei-every-frame.mp4")
        XCTAssertTrue((FileManager.default.contents(atPath: input) ?? Data()).range(of: Data("CANARY-SEI-GPS".utf8)) != nil)
        let result = Curl.post(server.base + "/v1/clean", file: input, scratch: scratch)
        XCTAssertEqual(result.status, 200, result.bodyText)
        XCTAssertEqual(result.headers["metascrub-status"], "cleaned")
        XCTAssertNil(result.body.range(of: Data("CANARY-SEI-GPS".utf8)), "SEI payload survived")
        let output = write(result.body, "cleaned.mp4")
        func frames(_ path: String) -> [String] {
            let out = Curl.run(["-v", "error", "-i", path, "-map", "0:v", "-f", "framemd5", "-"], executable: "/usr/bin/ffmpeg")
            return out.stdout.split(separator: "\n").filter { !$0.hasPrefix("#") }.map(String.init)
        }
        let before = frames(input)
        XCTAssertEqual(before.count, 20)
        XCTAssertEqual(before, frames(output), "decoded frames differ")
    }

    /// curl sends `Expect: 100-continue` for bodies over 1 MB and waits a second for the go-ahead; the server gives
    /// it (and refuses an oversized declared length without reading the body).
    func testExpect100Continue() throws {
        let server = try start(["--max-bytes", "1M"])
        let headers = scratch + "/continue-headers"
        let ok = Curl.run(["-s", "-o", "/dev/null", "-D", headers, "-w", "%{http_code}", "-H", "Expect: 100-continue",
                           "--data-binary", "@" + ServeProcess.fixture("jpeg/gps-full.jpg"), server.base + "/v1/clean"])
        XCTAssertEqual(ok.stdout, "200")
        XCTAssertTrue(((try? String(contentsOfFile: headers, encoding: .utf8)) ?? "").contains("HTTP/1.1 100 Continue"))
        let big = scratch + "/big.bin"
        FileManager.default.createFile(atPath: big, contents: Data(count: 3 << 20))
        let refused = Curl.run(["-s", "-o", "/dev/null", "-w", "%{http_code}", "--data-binary", "@" + big, server.base + "/v1/clean"])
        XCTAssertEqual(refused.stdout, "413")
    }

    // MARK: refusals

    func testHostileFileGets422AndServerKeepsServing() throws {
        let server = try start()
        for name in ["jpeg/bad/truncated-header.jpg", "jpeg/bad/bad-segment-length.jpg"] {
            let result = Curl.post(server.base + "/v1/clean", file: ServeProcess.fixture(name), scratch: scratch)
            XCTAssertEqual(result.status, 422, "\(name): \(result.bodyText)")
            let json = try JSONSerialization.jsonObject(with: result.body) as? [String: Any]
            XCTAssertNotNil(json?["error"] as? String, result.bodyText)
            XCTAssertNotNil(json?["message"] as? String)
        }
        XCTAssertEqual(Curl.get(server.base + "/healthz", scratch: scratch).status, 200)
        XCTAssertEqual(Curl.post(server.base + "/v1/clean", file: ServeProcess.fixture("jpeg/gps-full.jpg"), scratch: scratch).status, 200)
        XCTAssertEqual(server.spoolJobs, [])
    }

    func testStatusCodes413_415_400() throws {
        let server = try start(["--max-bytes", "2000"])
        let big = ServeProcess.fixture("jpeg/gps-full.jpg") // 2833 bytes
        XCTAssertEqual(Curl.post(server.base + "/v1/clean", file: big, scratch: scratch).status, 413)
        // Without a Content-Length the limit is enforced while the body is read.
        let chunked = Curl.post(server.base + "/v1/clean", file: big, extra: ["-H", "Transfer-Encoding: chunked"], scratch: scratch)
        XCTAssertEqual(chunked.status, 413, chunked.bodyText)
        XCTAssertTrue(chunked.bodyText.contains("too-large"))
        let text = write(Data(String(repeating: "not media at all\n", count: 20).utf8), "notes.txt")
        let unsupported = Curl.post(server.base + "/v1/clean", file: text, scratch: scratch)
        XCTAssertEqual(unsupported.status, 415, unsupported.bodyText)
        let small = ServeProcess.fixture("jpeg/clean.jpg")
        let badPolicy = Curl.post(server.base + "/v1/clean?policy=../../etc/passwd", file: small, scratch: scratch)
        XCTAssertEqual(badPolicy.status, 400, badPolicy.bodyText)
        XCTAssertTrue(badPolicy.bodyText.contains("bad-policy"))
        XCTAssertEqual(Curl.post(server.base + "/v1/clean?policy=share", file: small, scratch: scratch).status, 200)
        XCTAssertEqual(server.spoolJobs, [])
    }

    func testBearerToken401() throws {
        let tokenFile = write(Data("s3cret-token-0123456789\n".utf8), "token")
        let metricsAddress = "127.0.0.1:\(try ServeProcess.freePort())"
        let server = try start(["--token-file", tokenFile, "--metrics", metricsAddress])
        let file = ServeProcess.fixture("jpeg/clean.jpg")
        let missing = Curl.post(server.base + "/v1/clean", file: file, scratch: scratch)
        XCTAssertEqual(missing.status, 401)
        XCTAssertEqual(missing.headers["www-authenticate"], "Bearer realm=\"metascrub\"")
        XCTAssertEqual(Curl.post(server.base + "/v1/clean", file: file, extra: ["-H", "Authorization: Bearer wrong-token-0123456789"], scratch: scratch).status, 401)
        XCTAssertEqual(Curl.get(server.base + "/v1/formats", scratch: scratch).status, 401)
        XCTAssertEqual(Curl.post(server.base + "/v1/clean", file: file, extra: ["-H", "Authorization: Bearer s3cret-token-0123456789"], scratch: scratch).status, 200)
        // Probes stay open to the orchestrator.
        XCTAssertEqual(Curl.get(server.base + "/healthz", scratch: scratch).status, 200)
        XCTAssertEqual(Curl.get(server.base + "/readyz", scratch: scratch).status, 200)
        // Refusals are counted too, by endpoint.
        let metrics = Curl.get("http://\(metricsAddress)/metrics", scratch: scratch).bodyText
        XCTAssertTrue(metrics.contains("metascrub_requests_total{endpoint=\"clean\",code=\"401\"} 2"), metrics)
        XCTAssertTrue(metrics.contains("metascrub_requests_total{endpoint=\"formats\",code=\"401\"} 1"), metrics)
    }

    func testFullServerAnswers429WithRetryAfter() throws {
        let server = try start(["--workers", "1", "--queue", "0"], stallMs: 3000)
        let first = Curl.start(server.base + "/v1/clean", file: ServeProcess.fixture("jpeg/gps-full.jpg"), scratch: scratch)
        XCTAssertNotNil(server.waitForWorker(), "no worker started")
        let second = Curl.post(server.base + "/v1/clean", file: ServeProcess.fixture("jpeg/clean.jpg"), scratch: scratch)
        XCTAssertEqual(second.status, 429, second.bodyText)
        XCTAssertEqual(second.headers["retry-after"], "1")
        XCTAssertEqual(first.finish().status, 200)
    }

    // MARK: isolation

    func testWorkerKilledMidRequestCostsThatRequestOnly() throws {
        let server = try start(["--workers", "2"], stallMs: 4000)
        let doomed = Curl.start(server.base + "/v1/clean", file: ServeProcess.fixture("jpeg/gps-full.jpg"), scratch: scratch)
        let worker = try XCTUnwrap(server.waitForWorker(), "no worker started")
        // Once confined (before the stall), the worker holds no socket the server let through exec.
        func sockets() -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(worker)/fd")) ?? []).compactMap {
                let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(worker)/fd/\($0)")
                return target?.hasPrefix("socket:") == true ? target : nil
            }
        }
        var open = sockets()
        for _ in 0..<100 where !open.isEmpty {
            usleep(20_000)
            open = sockets()
        }
        XCTAssertEqual(open, [], "the worker kept the server's sockets")
        XCTAssertEqual(kill(worker, SIGKILL), 0)
        let result = doomed.finish()
        XCTAssertEqual(result.status, 503, result.bodyText)
        XCTAssertNotNil(result.headers["retry-after"])
        XCTAssertTrue(result.bodyText.contains("worker-crashed"), result.bodyText)
        XCTAssertTrue(server.process.isRunning)
        // The next file goes through (stalled, but answered).
        let next = Curl.post(server.base + "/v1/clean", file: ServeProcess.fixture("jpeg/gps-full.jpg"), scratch: scratch)
        XCTAssertEqual(next.status, 200, next.bodyText)
        XCTAssertEqual(server.spoolJobs, [], "the killed worker's files were left behind")
    }

    /// A client that gives up mid-upload leaves nothing in the spool, and the server goes on.
    func testClientAbortMidUploadLeavesNoSpoolFile() throws {
        let server = try start()
        let big = scratch + "/big.bin"
        FileManager.default.createFile(atPath: big, contents: Data(count: 8 << 20))
        let aborted = Curl.run(["-s", "-o", "/dev/null", "-X", "POST", "--data-binary", "@" + big, "--limit-rate", "1M",
                                "--max-time", "1", server.base + "/v1/clean"])
        XCTAssertEqual(aborted.status, 28, "curl should have timed out mid-upload")
        var jobs = server.spoolJobs
        for _ in 0..<100 where !jobs.isEmpty {
            usleep(50_000)
            jobs = server.spoolJobs
        }
        XCTAssertEqual(jobs, [], "the aborted upload's spool folder was left")
        XCTAssertEqual(Curl.post(server.base + "/v1/clean", file: ServeProcess.fixture("jpeg/clean.jpg"), scratch: scratch).status, 200)
    }

    func testTimeoutStopsTheWorker() throws {
        let server = try start(["--timeout", "1"], stallMs: 5000)
        let started = Date()
        let result = Curl.post(server.base + "/v1/clean", file: ServeProcess.fixture("jpeg/clean.jpg"), scratch: scratch)
        XCTAssertEqual(result.status, 503, result.bodyText)
        XCTAssertTrue(result.bodyText.contains("timeout"))
        XCTAssertLessThan(Date().timeIntervalSince(started), 4)
        XCTAssertTrue(server.workerPIDs.isEmpty, "the worker outlived its timeout")
        XCTAssertEqual(server.spoolJobs, [])
    }

    /// The worker's rlimits hold: with a file-size limit smaller than the cleaned file, the worker is stopped
    /// and writes nothing.
    func testWorkerResourceLimitIsEnforced() throws {
        let worker = Curl.run(["worker", "--mode", "clean", "--input", ServeProcess.fixture("mp4/sei-every-frame.mp4"),
                               "--output", scratch + "/out.mp4", "--report", scratch + "/report.json", "--policy", "strict",
                               "--file-size", "1024"], executable: ServeProcess.binary)
        XCTAssertNotEqual(worker.status, 0, "a 1 KiB file-size limit did not stop a larger output")
        XCTAssertFalse(FileManager.default.fileExists(atPath: scratch + "/out.mp4"))
    }

    /// What a worker's sandbox refuses, as the worker itself reports it: a network socket and exec, with the
    /// resource limits in place and no core dumps.
    func testWorkerSandboxRefusesNetworkAndExec() throws {
        let probe = Curl.run(["serve", "--probe-sandbox", "--probe-cpu-seconds", "7", "--probe-address-space", "4294967296",
                              "--probe-file-size", "1048576"],
                             executable: ServeProcess.binary)
        XCTAssertEqual(probe.status, 0, probe.stderr)
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(probe.stdout.utf8)) as? [String: Any], probe.stdout)
        XCTAssertEqual(json["seccomp"] as? Bool, true, probe.stdout)
        XCTAssertTrue((json["inet_socket"] as? String)?.hasPrefix("refused") == true, probe.stdout)
        XCTAssertTrue((json["exec"] as? String)?.hasPrefix("refused") == true, probe.stdout)
        XCTAssertEqual(json["rlimit_cpu"] as? Int, 7)
        XCTAssertEqual(json["rlimit_as"] as? Int, 4294967296)
        XCTAssertEqual(json["rlimit_fsize"] as? Int, 1048576)
        XCTAssertEqual(json["rlimit_core"] as? Int, 0)
    }

    /// `clean --sandbox` confines the CLI the same way and still cleans (FFmpeg loaded under the filter).
    func testCLICleanWithSandbox() throws {
        for (fixture, name) in [("jpeg/gps-full.jpg", "out.jpg"), ("mp4/sei-every-frame.mp4", "out.mp4")] {
            let run = Curl.run(["clean", "--sandbox", ServeProcess.fixture(fixture), "--output", scratch + "/" + name],
                               executable: ServeProcess.binary)
            XCTAssertEqual(run.status, 0, run.stderr)
            let data = try XCTUnwrap(FileManager.default.contents(atPath: scratch + "/" + name))
            XCTAssertNil(data.range(of: Data("CANARY".utf8)), fixture)
        }
    }

    // MARK: draining

    func testSIGTERMDrainsInFlightRequests() throws {
        let server = try start(stallMs: 2000)
        let inFlight = Curl.start(server.base + "/v1/clean", file: ServeProcess.fixture("jpeg/gps-full.jpg"), scratch: scratch)
        XCTAssertNotNil(server.waitForWorker())
        kill(server.process.processIdentifier, SIGTERM)
        let result = inFlight.finish()
        XCTAssertEqual(result.status, 200, result.bodyText + server.serverLog)
        XCTAssertEqual(result.headers["metascrub-status"], "cleaned")
        server.process.waitUntilExit()
        XCTAssertEqual(server.process.terminationStatus, 0, server.serverLog)
        for spool in [server.spool, server.memorySpool] {
            XCTAssertEqual((try? FileManager.default.contentsOfDirectory(atPath: spool)) ?? ["?"], [],
                           "spool left behind")
        }
        XCTAssertNotEqual(Curl.get(server.base + "/healthz", scratch: scratch).status, 200)
    }

    // MARK: reports and listings

    func testScanCheckAndListings() throws {
        let server = try start(["--metrics", "127.0.0.1:\(try ServeProcess.freePort())"])
        let scan = Curl.post(server.base + "/v1/scan", file: ServeProcess.fixture("jpeg/gps-full.jpg"), scratch: scratch)
        XCTAssertEqual(scan.status, 200)
        let report = try XCTUnwrap(JSONSerialization.jsonObject(with: scan.body) as? [String: Any])
        XCTAssertEqual(report["schema_version"] as? Int, 1)
        XCTAssertEqual(report["command"] as? String, "scan")
        let files = try XCTUnwrap(report["files"] as? [[String: Any]])
        XCTAssertEqual(files.first?["status"] as? String, "findings")
        XCTAssertEqual(files.first?["path"] as? String, "upload")
        XCTAssertFalse(scan.bodyText.contains("CANARY"), "metadata values in the report without --show-values")
        XCTAssertEqual(Curl.post(server.base + "/v1/check", file: ServeProcess.fixture("jpeg/gps-full.jpg"), scratch: scratch).status, 422)
        XCTAssertEqual(Curl.post(server.base + "/v1/check", file: ServeProcess.fixture("jpeg/clean.jpg"), scratch: scratch).status, 200)
        let formats = Curl.get(server.base + "/v1/formats", scratch: scratch)
        XCTAssertEqual(formats.status, 200)
        XCTAssertTrue(formats.bodyText.contains("\"id\" : \"jpeg\""), formats.bodyText)
        let policies = Curl.get(server.base + "/v1/policies", scratch: scratch)
        XCTAssertTrue(policies.bodyText.contains("\"name\" : \"strict\""), policies.bodyText)
        XCTAssertEqual(Curl.get(server.base + "/readyz", scratch: scratch).status, 200)
        let metricsPort = server.process.arguments![server.process.arguments!.firstIndex(of: "--metrics")! + 1]
        let metrics = Curl.get("http://\(metricsPort)/metrics", scratch: scratch)
        XCTAssertEqual(metrics.status, 200)
        XCTAssertTrue(metrics.bodyText.contains("metascrub_requests_total{"), metrics.bodyText)
        XCTAssertTrue(metrics.bodyText.contains("metascrub_workers_total{result=\"ok\"}"), metrics.bodyText)
    }

    func testServeSectionOfConfigFile() throws {
        let port = try ServeProcess.freePort()
        // The memory spool's folder is relative to the config file's.
        let yaml = "schema: 1\npolicy: share\nserve:\n  listen: 127.0.0.1:\(port)\n  max-bytes: 1K\n"
            + "  workers: 1\n  memory-spool: mem\n  memory-spool-bytes: 1M\n"
        let config = write(Data(yaml.utf8), "metascrub.yaml")
        let directory = scratch + "/cfg"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: scratch + "/mem", withIntermediateDirectories: true)
        let log = scratch + "/config-server.log"
        FileManager.default.createFile(atPath: log, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ServeProcess.binary)
        process.arguments = ["serve", "--config", config, "--spool", directory]
        process.standardError = FileHandle(forWritingAtPath: log)
        try process.run()
        defer {
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
        }
        var answered = false
        for _ in 0..<300 where !answered {
            answered = Curl.run(["-s", "-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(port)/healthz"]).stdout == "200"
            if !answered { usleep(50_000) }
        }
        XCTAssertTrue(answered, "not listening on the configured address")
        let started = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        XCTAssertTrue(started.contains("memory spool 1048576 bytes in \(scratch!)/mem/metascrub-"), started)
        let policies = Curl.get("http://127.0.0.1:\(port)/v1/policies", scratch: scratch).body
        let list = try XCTUnwrap(JSONSerialization.jsonObject(with: policies) as? [[String: Any]])
        XCTAssertEqual(list.first { $0["default"] as? Bool == true }?["name"] as? String, "share")
        XCTAssertEqual(Curl.post("http://127.0.0.1:\(port)/v1/clean", file: ServeProcess.fixture("jpeg/gps-full.jpg"), scratch: scratch).status, 413)
    }

    /// A memory spool the operator named must be usable, and its size a size: either is a usage error at start.
    func testABadMemorySpoolStopsTheStart() throws {
        let missing = Curl.run(["serve", "--no-config", "--listen", "127.0.0.1:0", "--memory-spool", scratch + "/none"],
                               executable: ServeProcess.binary)
        XCTAssertNotEqual(missing.status, 0)
        XCTAssertTrue(missing.stderr.contains(scratch + "/none"), missing.stderr)
        let size = Curl.run(["serve", "--no-config", "--listen", "127.0.0.1:0", "--memory-spool-bytes", "lots"],
                            executable: ServeProcess.binary)
        XCTAssertNotEqual(size.status, 0)
        XCTAssertTrue(size.stderr.contains("--memory-spool-bytes"), size.stderr)
    }
}
