// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import XCTest

/// The command-line contract other tools depend on: exit codes, output formats, what is written where.
final class CLITests: XCTestCase {
    static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The built `metascrub` next to the test bundle.
    static var binary: String {
        let products = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for candidate in [products, products.deletingLastPathComponent()] {
            let path = candidate.appendingPathComponent("metascrub").path
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return repo.appendingPathComponent(".build/debug/metascrub").path
    }

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    @discardableResult
    func run(_ args: [String], cwd: String? = nil) -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = args
        if let cwd { process.currentDirectoryURL = URL(fileURLWithPath: cwd) }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try! process.run()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        ReportSchemaCheck.check(args, stdout: o, cwd: cwd)
        return Result(status: process.terminationStatus, stdout: String(decoding: o, as: UTF8.self), stderr: String(decoding: e, as: UTF8.self))
    }

    func fixture(_ name: String) -> String { Self.repo.appendingPathComponent("Fixtures/\(name)").path }

    var tmp: String!

    override func setUpWithError() throws {
        tmp = NSTemporaryDirectory() + "metascrub-cli-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: tmp, withIntermediateDirectories: true)
        try Harness.requireBinary()
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: tmp) }

    func copy(_ fixtureName: String, as name: String? = nil) -> String {
        let target = tmp + "/" + (name ?? (fixtureName as NSString).lastPathComponent)
        try? FileManager.default.removeItem(atPath: target)
        try! FileManager.default.copyItem(atPath: fixture(fixtureName), toPath: target)
        return target
    }

    func testVersionAndHelp() {
        let version = run(["--version"])
        XCTAssertEqual(version.status, 0)
        XCTAssertTrue(version.stdout.hasPrefix("0."))
        XCTAssertEqual(run(["--help"]).status, 0)
    }

    /// A damaged file cleans by default with a warning; `--refuse-damaged` refuses it (exit 3, nothing written).
    func testRefuseDamagedFlag() {
        let input = fixture("damaged/cut-in-data.wav")
        XCTAssertEqual(run(["scan", input]).status, 1)
        XCTAssertEqual(run(["scan", "--refuse-damaged", input]).status, 3)
        let cleaned = run(["clean", input, "--output", tmp + "/cut.wav", "--json"])
        XCTAssertEqual(cleaned.status, 0)
        XCTAssertTrue(cleaned.stdout.contains("damaged-input"), cleaned.stdout)
        XCTAssertEqual(run(["clean", "--refuse-damaged", input, "--output", tmp + "/refused.wav"]).status, 3)
        XCTAssertFalse(Harness.exists(tmp + "/refused.wav"))
    }

    func testScanExitCodes() {
        XCTAssertEqual(run(["scan", fixture("jpeg/clean.jpg")]).status, 0)
        XCTAssertEqual(run(["scan", fixture("jpeg/gps-full.jpg")]).status, 1)
        XCTAssertEqual(run(["scan", fixture("jpeg/bad/truncated-header.jpg")]).status, 3)
        XCTAssertEqual(run(["scan", tmp + "/does-not-exist.jpg"]).status, 3)
        XCTAssertEqual(run(["scan", fixture("misc/readme.txt")]).status, 0, "a non-media file is skipped, not an error")
        XCTAssertEqual(run(["scan", "--policy", "no-such-policy", fixture("jpeg/clean.jpg")]).status, 2)
        XCTAssertEqual(run(["scan"]).status, 2, "missing argument is a usage error")
        XCTAssertEqual(run(["clean", fixture("jpeg/clean.jpg")]).status, 2, "clean needs an output mode")
        XCTAssertEqual(run(["clean", fixture("jpeg"), "--output", tmp + "/x.jpg"]).status, 2, "--output takes one file")
    }

    func testJSONReportIsMachineReadableAndHasNoValues() throws {
        let r = run(["scan", "--json", fixture("jpeg/gps-full.jpg")])
        XCTAssertEqual(r.status, 1)
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(json["schema_version"] as? Int, 1)
        XCTAssertEqual((json["policy"] as? [String: Any])?["name"] as? String, "strict")
        let file = try XCTUnwrap((json["files"] as? [[String: Any]])?.first)
        XCTAssertEqual(file["status"] as? String, "findings")
        XCTAssertEqual(file["format"] as? String, "jpeg")
        XCTAssertFalse(r.stdout.contains("CANARY"), "values never appear without --show-values")
        XCTAssertFalse(r.stderr.contains("CANARY"))
    }

    func testShowValuesIsTheOnlyWayValuesAppear() {
        for args in [["scan"], ["scan", "-v"], ["scan", "--format", "sarif"], ["clean", "--output", tmp + "/o.jpg", "-v"]] {
            let r = run(args + [fixture("jpeg/gps-full.jpg")])
            XCTAssertFalse((r.stdout + r.stderr).contains("CANARY"), "\(args) leaked a value")
        }
        let shown = run(["scan", "--show-values", fixture("jpeg/gps-full.jpg")])
        XCTAssertTrue(shown.stdout.contains("CANARY-ARTIST-Alice"))
    }

    func testCleanToOutputWritesVerifiedCopyAndLeavesInputAlone() throws {
        let input = copy("jpeg/gps-full.jpg")
        let before = try Data(contentsOf: URL(fileURLWithPath: input))
        let out = tmp + "/out.jpg"
        let r = run(["clean", input, "--output", out, "--json"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: input)), before, "input untouched")
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let file = try XCTUnwrap((json["files"] as? [[String: Any]])?.first)
        XCTAssertEqual(file["status"] as? String, "cleaned")
        XCTAssertEqual((file["verification"] as? [String: Any])?["rescan"] as? String, "passed")
        XCTAssertNotEqual(file["sha256_before"] as? String, file["sha256_after"] as? String)
        XCTAssertEqual(run(["scan", out]).status, 0, "the cleaned file scans clean")
    }

    func testOutputIsWrittenEvenWhenNothingNeedsRemoving() throws {
        let out = tmp + "/same.jpg"
        XCTAssertEqual(run(["clean", fixture("jpeg/clean.jpg"), "--output", out]).status, 0)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: out)), try Data(contentsOf: URL(fileURLWithPath: fixture("jpeg/clean.jpg"))))
    }

    func testInPlaceAndExitCodeForHooks() throws {
        let input = copy("jpeg/gps-full.jpg")
        XCTAssertEqual(run(["clean", "--in-place", "--exit-code", input]).status, 1, "changed a file")
        XCTAssertEqual(run(["clean", "--in-place", "--exit-code", input]).status, 0, "second run: nothing to change")
        XCTAssertEqual(run(["scan", input]).status, 0)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: tmp).filter { $0.hasPrefix(".metascrub-") }
        XCTAssertEqual(leftovers, [], "no temp files left")
    }

    func testAFailedFileIsLeftExactlyAsItWasAndTheOthersAreDone() throws {
        let good = copy("jpeg/gps-full.jpg")
        let bad = copy("jpeg/bad/truncated-in-scan.jpg")
        let badBefore = try Data(contentsOf: URL(fileURLWithPath: bad))
        let r = run(["clean", "--in-place", good, bad])
        XCTAssertEqual(r.status, 3)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: bad)), badBefore)
        XCTAssertEqual(run(["scan", good]).status, 0, "the good file was still cleaned")
        XCTAssertTrue(r.stdout.contains("truncated"))
    }

    func testUnsupportedAndNonMediaFilesAreNeverPassedOnAsClean() {
        let text = copy("misc/readme.txt")
        XCTAssertEqual(run(["clean", text, "--output", tmp + "/r.txt"]).status, 3)
        XCTAssertFalse(FileManager.default.fileExists(atPath: tmp + "/r.txt"))
    }

    func testOutputDirMirrorsFolders() throws {
        let out = tmp + "/site"
        let r = run(["clean", fixture("jpeg"), "--output-dir", out, "-q"])
        XCTAssertEqual(r.status, 3, "the bad/ fixtures fail")
        XCTAssertTrue(FileManager.default.fileExists(atPath: out + "/gps-full.jpg"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: out + "/bad/truncated-header.jpg"))
        XCTAssertTrue(r.stderr.contains("truncated-header.jpg"), "quiet still reports errors on stderr")
        XCTAssertEqual(r.stdout, "")
    }

    func testReportFileAndSARIF() throws {
        let sarif = tmp + "/r.sarif"
        XCTAssertEqual(run(["scan", fixture("jpeg/gps-full.jpg"), "--report", sarif, "-q"]).status, 1)
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: sarif))) as? [String: Any])
        XCTAssertEqual(json["version"] as? String, "2.1.0")
    }

    func testPolicyCommands() throws {
        let list = run(["policy", "list"])
        XCTAssertEqual(list.status, 0)
        XCTAssertTrue(list.stdout.contains("strict (default)"))
        XCTAssertTrue(run(["policy", "show", "share"]).stdout.contains("name: share"))
        let badPolicy = tmp + "/bad.yaml"
        try "schema: 1\nname: bad\ncategories:\n  gps: remove\n".write(toFile: badPolicy, atomically: true, encoding: .utf8)
        let check = run(["policy", "check", badPolicy])
        XCTAssertEqual(check.status, 2)
        XCTAssertTrue(check.stderr.contains("bad.yaml:4: categories.gps: unknown category"), check.stderr)
        XCTAssertEqual(run(["scan", "--policy", badPolicy, fixture("jpeg/clean.jpg")]).status, 2)
        let failPolicy = tmp + "/fail.yaml"
        try "schema: 1\nname: block-gps\ndefault: keep\ncategories:\n  location: fail\n".write(toFile: failPolicy, atomically: true, encoding: .utf8)
        XCTAssertEqual(run(["scan", "--policy", failPolicy, fixture("jpeg/gps-full.jpg")]).status, 1)
        let input = copy("jpeg/gps-full.jpg")
        XCTAssertEqual(run(["clean", "--policy", failPolicy, "--in-place", input]).status, 3, "a forbidden item refuses the file")
    }

    func testFormatsTable() {
        let r = run(["formats"])
        XCTAssertEqual(r.status, 0)
        XCTAssertTrue(r.stdout.contains("JPEG"))
        XCTAssertTrue(r.stdout.contains("avformat"), "no libavformat row")
        XCTAssertTrue(r.stdout.contains("Native handlers stay first"), "formats does not say which containers go which way")
    }

    /// FFmpeg is loaded with dlopen by the first audio/video file that needs it, never linked: the binary does not
    /// depend on libav*, and `--version` or an image scan does not load it (the dynamic loader's own log says so).
    func testFFmpegIsLoadedOnlyWhenAContainerNeedsIt() {
        let ldd = Harness.exec("ldd", [Self.binary])
        XCTAssertEqual(ldd.status, 0, "ldd missing or failed")
        XCTAssertFalse(ldd.out.contains("libav"), "the binary links FFmpeg")
        func loads(_ args: [String]) -> Bool {
            let r = Harness.exec(Self.binary, args, env: ["LD_DEBUG": "files"])
            return r.stderr.contains("libavformat.so")
        }
        XCTAssertFalse(loads(["--version"]))
        XCTAssertFalse(loads(["scan", fixture("jpeg/gps-full.jpg")]))
        XCTAssertTrue(loads(["scan", fixture("av/tags.flv")]))
    }
}
