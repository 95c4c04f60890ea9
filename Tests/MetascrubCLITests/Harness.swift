// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import XCTest

/// Runs the built binary and other tools for the workflow tests (folders, git, pre-commit, man pages).
enum Harness {
    static let repo = CLITests.repo
    static var binary: String { CLITests.binary }

    struct Result {
        var status: Int32
        var stdout: Data
        var stderr: String
        var out: String { String(decoding: stdout, as: UTF8.self) }
    }

    /// Runs `executable` (a path, or a name looked up on PATH) with stdin from `input`.
    @discardableResult
    static func exec(_ executable: String, _ args: [String], cwd: String? = nil, input: Data? = nil,
                     env: [String: String] = [:]) -> Result {
        let process = Process()
        if executable.hasPrefix("/") {
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = args
        } else {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [executable] + args
        }
        if let cwd { process.currentDirectoryURL = URL(fileURLWithPath: cwd) }
        var environment = ProcessInfo.processInfo.environment
        // A developer's own git settings (hooksPath, signing) must not leak into the temporary repositories.
        environment["GIT_CONFIG_GLOBAL"] = "/dev/null"
        environment["GIT_CONFIG_NOSYSTEM"] = "1"
        environment["GIT_AUTHOR_NAME"] = "Test"
        environment["GIT_AUTHOR_EMAIL"] = "test@example.invalid"
        environment["GIT_COMMITTER_NAME"] = "Test"
        environment["GIT_COMMITTER_EMAIL"] = "test@example.invalid"
        for (key, value) in env { environment[key] = value }
        process.environment = environment
        let out = Pipe(), err = Pipe(), inp = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input == nil ? FileHandle.nullDevice : inp
        try! process.run()
        if let input {
            let writer = inp.fileHandleForWriting
            Thread.detachNewThread {
                writer.write(input)
                try? writer.close()
            }
        }
        let errData = ErrBox()
        let group = DispatchGroup()
        group.enter()
        Thread.detachNewThread {
            errData.data = err.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
        let o = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: o, stderr: String(decoding: errData.data, as: UTF8.self))
    }

    final class ErrBox: @unchecked Sendable { var data = Data() }

    @discardableResult
    static func metascrub(_ args: [String], cwd: String? = nil, input: Data? = nil, env: [String: String] = [:]) -> Result {
        let result = exec(binary, args, cwd: cwd, input: input, env: env)
        ReportSchemaCheck.check(args, stdout: result.stdout, cwd: cwd)
        return result
    }

    /// A shell command (for git plumbing and pipes), failing the test when it fails unless `check` is false.
    @discardableResult
    static func sh(_ script: String, cwd: String, check: Bool = true, env: [String: String] = [:],
                   file: StaticString = #filePath, line: UInt = #line) -> Result {
        let r = exec("/bin/sh", ["-c", script], cwd: cwd, env: env)
        if check { XCTAssertEqual(r.status, 0, "\(script): \(r.stderr)", file: file, line: line) }
        return r
    }

    static func fixture(_ name: String) -> String { repo.appendingPathComponent("Fixtures/\(name)").path }

    static func makeTemp(_ label: String) -> String {
        let dir = NSTemporaryDirectory() + "metascrub-\(label)-" + UUID().uuidString
        try! FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    static func copy(_ fixtureName: String, to path: String) {
        try? FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try? FileManager.default.removeItem(atPath: path)
        try! FileManager.default.copyItem(atPath: fixture(fixtureName), toPath: path)
    }

    static func data(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }

    static func exists(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0
    }

    static func json(_ data: Data) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
    }

    static func tool(_ name: String) -> Bool { exec("/bin/sh", ["-c", "command -v \(name)"], cwd: "/").status == 0 }

    struct Missing: Error { var what: String }

    /// Fails (not skips) the test when the built executable is missing: a CLI test that cannot run has not passed.
    static func requireBinary(file: StaticString = #filePath, line: UInt = #line) throws {
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            XCTFail("\(binary) is missing: build the metascrub executable before the CLI tests (swift build)", file: file, line: line)
            throw Missing(what: binary)
        }
    }

    /// Fails (not skips) the test when a tool it checks with (git, exiftool) is missing.
    static func require(_ name: String, file: StaticString = #filePath, line: UInt = #line) throws {
        guard tool(name) else {
            XCTFail("\(name) is missing; scripts/install-deps installs it", file: file, line: line)
            throw Missing(what: name)
        }
    }
}
