// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import XCTest

/// Issue 8 through the built binary: canary values never printed, a full disk (RLIMIT_FSIZE), the kill test,
/// no networking code, temp files only in the destination folder.
final class ReliabilityTests: XCTestCase {
    override func setUpWithError() throws {
        try Harness.requireBinary()
    }

    /// Manifest rows with canary values: (relative path, canaries).
    static func canaryRows() -> [(String, [String])] {
        guard let text = try? String(contentsOfFile: Harness.fixture("MANIFEST.tsv"), encoding: .utf8) else { return [] }
        return text.split(separator: "\n").dropFirst().compactMap { line in
            let f = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard f.count >= 4, !f[3].isEmpty else { return nil }
            return (String(f[0]), f[3].split(separator: ",").map(String.init).filter { $0.count >= 6 })
        }
    }

    // MARK: canaries

    func testNoCanaryValueReachesAnyOutputWithoutShowValues() throws {
        let rows = Self.canaryRows()
        XCTAssertGreaterThan(rows.count, 30)
        let dir = Harness.makeTemp("canary")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for (relative, _) in rows where FileManager.default.fileExists(atPath: Harness.fixture(relative)) {
            Harness.copy(relative, to: "\(dir)/in/\(relative)")
            // The error paths too: every canary file cut in half (its metadata usually survives the cut).
            let bytes = Harness.data(Harness.fixture(relative))!
            let cut = "\(dir)/in/truncated/\(relative)"
            try FileManager.default.createDirectory(atPath: (cut as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            _ = FileManager.default.createFile(atPath: cut, contents: bytes.prefix(bytes.count / 2))
        }
        let canaries = Set(rows.flatMap(\.1))
        let canaryBytes = canaries.sorted().map { ($0, Data($0.utf8)) }
        let runs: [[String]] = [
            ["scan", "in"], ["scan", "-v", "in"], ["scan", "--format", "json", "in"], ["scan", "--format", "sarif", "-v", "in"],
            ["scan", "--format", "brief", "in"], ["scan", "-v", "in", "--report", "r1.json"], ["scan", "in", "--report", "r2.sarif"],
            ["scan", "-v", "in", "--report", "r3.txt"],
            ["clean", "-v", "in", "--output-dir", "out1", "--report", "r4.json"],
            ["clean", "--format", "json", "-v", "in", "--output-dir", "out2"],
            ["clean", "--format", "sarif", "in", "--output-dir", "out3", "--report", "r5.sarif"],
            ["scan", "-v", "in/truncated"], ["clean", "-v", "in/truncated", "--output-dir", "out4"],
        ]
        var seen = 0
        for args in runs {
            let r = Harness.metascrub(args + ["--no-config"], cwd: dir)
            XCTAssertTrue([0, 1, 3].contains(r.status), "\(args): exit \(r.status) \(r.stderr.prefix(300))")
            var texts = [("stdout", r.stdout), ("stderr", Data(r.stderr.utf8))]
            for report in ["r1.json", "r2.sarif", "r3.txt", "r4.json", "r5.sarif"] {
                if let d = Harness.data("\(dir)/\(report)") { texts.append((report, d)) }
            }
            // memmem: String.contains (and Data.range) over megabytes of SARIF, for 100 canaries, takes minutes.
            for (name, text) in texts {
                seen += text.count
                for canary in canaryBytes where Self.contains(text, canary.1) {
                    XCTFail("\(args) \(name): canary \(canary.0) printed without --show-values")
                }
            }
        }
        XCTAssertGreaterThan(seen, 10_000, "the runs printed almost nothing: the test would prove nothing")

        // The control: with --show-values the same values do appear, so the checks above can fail.
        let shown = Harness.metascrub(["scan", "-v", "--show-values", "--no-config", "in"], cwd: dir)
        let found = canaryBytes.filter { Self.contains(shown.stdout, $0.1) }.map(\.0)
        XCTAssertGreaterThan(found.count, canaries.count / 3, "--show-values shows only \(found.sorted())")
    }

    /// Byte search with memchr and memcmp (memmem is not exported to Swift here).
    static func contains(_ haystack: Data, _ needle: Data) -> Bool {
        haystack.withUnsafeBytes { h in
            needle.withUnsafeBytes { n in
                guard n.count > 0 else { return true }
                guard h.count >= n.count, let base = h.baseAddress, let want = n.baseAddress else { return false }
                let end = base + (h.count - n.count + 1)
                var at = base
                while at < end, let hit = memchr(at, Int32(n[0]), end - at) {
                    if memcmp(hit, want, n.count) == 0 { return true }
                    at = UnsafeRawPointer(hit) + 1
                }
                return false
            }
        }
    }

    // MARK: full disk

    /// RLIMIT_FSIZE with SIGXFSZ ignored: writes past the limit fail with EFBIG, like a full disk for this file.
    func testFileSizeLimitLeavesTheOriginalAndNoTempFile() throws {
        let dir = Harness.makeTemp("fsize")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let fixtures = ["jpeg/gps-full.jpg", "png/text.png", "heic/exif-xmp.heic", "webp/exif-xmp.webp", "mp4/location.mp4"]
        for fixture in fixtures {
            Harness.copy(fixture, to: "\(dir)/in/\((fixture as NSString).lastPathComponent)")
        }
        let originals = fixtures.map { Harness.data("\(dir)/in/\(($0 as NSString).lastPathComponent)")! }
        // A limit of 0 blocks: the first byte written to any file fails, as on a full disk. (Every fixture here
        // has something to remove, so each one really writes.)
        for args in [["clean", "in", "--in-place"], ["clean", "in", "--output-dir", "out"]] {
            let script = "trap '' XFSZ; ulimit -f 0; exec \"$0\" \"$@\""
            let r = Harness.exec("/bin/bash", ["-c", script, Harness.binary] + args + ["--no-config", "--jobs", "1"], cwd: dir)
            XCTAssertEqual(r.status, 3, "\(args): \(r.stderr)")
            // The report (standard output) names the failure for every file.
            let said = r.out + r.stderr
            XCTAssertGreaterThanOrEqual(said.components(separatedBy: "File too large").count - 1, fixtures.count, "\(args): no clear error: \(said)")
            for (fixture, original) in zip(fixtures, originals) {
                XCTAssertEqual(Harness.data("\(dir)/in/\((fixture as NSString).lastPathComponent)"), original, "\(args): \(fixture) changed")
            }
            let outputs = (try? FileManager.default.subpathsOfDirectory(atPath: "\(dir)/out")) ?? []
            XCTAssertTrue(outputs.allSatisfy { !$0.contains(".metascrub-") }, "\(args): temp files: \(outputs)")
            let inputs = try FileManager.default.contentsOfDirectory(atPath: "\(dir)/in")
            XCTAssertEqual(inputs.filter { $0.hasPrefix(".metascrub-") }, [], "\(args): temp files left")
        }
    }

    // MARK: kill test

    /// The reduced kill test (scripts/kill-test runs 100 iterations).
    func testKillTestFiveIterations() throws {
        let r = Harness.exec(Harness.repo.appendingPathComponent("scripts/kill-test").path, ["5", "7"],
                             cwd: Harness.repo.path, env: ["METASCRUB": Harness.binary])
        print(r.out)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.out.contains("PASS"), r.out + r.stderr)
    }

    // MARK: no network, temp files in place

    /// No networking library is linked. Since issue 27 the binary carries an HTTP server (`metascrub serve`,
    /// SwiftNIO: socket, bind, listen, accept), so the promise that file processing never reaches the network is
    /// kept at run time instead: `clean --sandbox` and every `serve` worker enter a seccomp filter that refuses
    /// network sockets, checked here through `worker --probe`. Outbound calls stay absent from the imports.
    func testBinaryLinksNoNetworkingCode() throws {
        try Harness.require("ldd"); try Harness.require("nm")
        let libs = Harness.exec("ldd", [Harness.binary]).out
        for lib in ["libcurl", "libssl", "libgnutls", "libnghttp", "libssh", "libresolv", "libldap", "libavformat"] {
            XCTAssertFalse(libs.contains(lib), "the binary links \(lib)")
        }
        let undefined = Harness.exec("nm", ["-D", "--undefined-only", Harness.binary]).out
        let symbols = Set(undefined.split(separator: "\n").compactMap { $0.split(separator: " ").last.map { String($0.split(separator: "@").first ?? "") } })
        for call in ["gethostbyname", "sendto"] {
            XCTAssertFalse(symbols.contains(call), "the binary imports \(call)")
        }
        XCTAssertFalse(symbols.isEmpty, "nm printed nothing: the check would prove nothing")
        let probe = Harness.exec(Harness.binary, ["worker", "--probe"])
        XCTAssertEqual(probe.status, 0, probe.stderr)
        XCTAssertTrue(probe.out.contains("\"inet_socket\":\"refused"), probe.out)
    }

    /// TMPDIR points at a watched folder: no mode of writing puts anything there.
    func testNothingIsWrittenToTMPDIR() throws {
        let dir = Harness.makeTemp("tmpdir")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let watched = "\(dir)/watched"
        try FileManager.default.createDirectory(atPath: watched, withIntermediateDirectories: true)
        Harness.copy("jpeg/gps-full.jpg", to: "\(dir)/in/a.jpg")
        Harness.copy("png/text.png", to: "\(dir)/in/b.png")
        Harness.copy("mp4/location.mp4", to: "\(dir)/in/c.mp4")
        let env = ["TMPDIR": watched, "TMP": watched, "TEMP": watched]
        XCTAssertEqual(Harness.metascrub(["clean", "--no-config", "in", "--output-dir", "out"], cwd: dir, env: env).status, 0)
        XCTAssertEqual(Harness.metascrub(["clean", "--no-config", "in/a.jpg", "--output", "one.jpg"], cwd: dir, env: env).status, 0)
        let piped = Harness.metascrub(["clean", "--no-config", "-", "--output", "-"], cwd: dir, input: Harness.data(Harness.fixture("jpeg/gps-full.jpg")), env: env)
        XCTAssertEqual(piped.status, 0, piped.stderr)
        XCTAssertEqual(Harness.metascrub(["clean", "--no-config", "in", "--in-place"], cwd: dir, env: env).status, 0)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: watched), [], "something was written to TMPDIR")
        let everything = try FileManager.default.subpathsOfDirectory(atPath: dir)
        XCTAssertEqual(everything.filter { $0.contains(".metascrub-") }, [])
    }
}
