// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubFormats
import XCTest

/// The hooks for the pre-commit framework: their `files:` pattern is the format registry's extensions, and they
/// work with Debian's pre-commit (3.0.4) in a real repository, running the installed binary.
final class PreCommitTests: XCTestCase {
    func testEveryRegistryFormatHasExtensionsAndTheHooksUseThem() throws {
        XCTAssertEqual(HookFilePattern.missing, [], "give these formats their file extensions in HookFilePattern")
        try Harness.requireBinary()
        let generated = Harness.metascrub(["formats", "--hook-pattern"]).out.trimmingCharacters(in: .newlines)
        XCTAssertEqual(generated, HookFilePattern.regex)
        let hooks = try String(contentsOf: Harness.repo.appendingPathComponent(".pre-commit-hooks.yaml"), encoding: .utf8)
        let files = hooks.split(separator: "\n").filter { $0.hasPrefix("  files: ") }.map { String($0.dropFirst(9)) }
        XCTAssertEqual(files, [generated, generated], "regenerate with `metascrub formats --hook-pattern`")
        XCTAssertEqual(hooks.split(separator: "\n").filter { $0.hasPrefix("  language: ") }, ["  language: system", "  language: system"])
        for name in ["IMG_0001.HEIC", "a.cr2", "b.PSB", "c.m4v", "d.m4b", "e.3g2", "f.jpg", "g.NEF"] {
            XCTAssertNotNil(name.range(of: "\\.(" + generated.dropFirst(7).dropLast(2) + ")$", options: [.regularExpression, .caseInsensitive]), name)
        }
        XCTAssertNil("src/app.ts".range(of: "\\.(" + generated.dropFirst(7).dropLast(2) + ")$", options: [.regularExpression, .caseInsensitive]))
    }

    func testDebiansPreCommitRunsTheHooks() throws {
        try Harness.requireBinary()
        try Harness.require("git")
        try Harness.require("pre-commit")
        let tmp = Harness.makeTemp("pre-commit")
        defer { try? FileManager.default.removeItem(atPath: tmp) }
        // A repository holding only the hooks file stands in for this project's published repository.
        let hooksRepo = tmp + "/hooks"
        try FileManager.default.createDirectory(atPath: hooksRepo, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Harness.repo.appendingPathComponent(".pre-commit-hooks.yaml").path,
                                         toPath: hooksRepo + "/.pre-commit-hooks.yaml")
        Harness.sh("git init -q . && git add -A && git commit -qm hooks", cwd: hooksRepo)
        let rev = Harness.sh("git rev-parse HEAD", cwd: hooksRepo).out.trimmingCharacters(in: .whitespacesAndNewlines)

        let project = tmp + "/project"
        Harness.copy("jpeg/gps-full.jpg", to: project + "/photos/IMG_0001.JPG")
        Harness.copy("jpeg/clean.jpg", to: project + "/photos/clean.jpg")
        try "repos:\n  - repo: \(hooksRepo)\n    rev: \(rev)\n    hooks: [{id: metascrub-check}]\n"
            .write(toFile: project + "/.pre-commit-config.yaml", atomically: true, encoding: .utf8)
        Harness.sh("git init -q . && git add -A", cwd: project)
        let env = ["PRE_COMMIT_HOME": tmp + "/cache",
                   "PATH": (Harness.binary as NSString).deletingLastPathComponent + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")]
        let failing = Harness.exec("pre-commit", ["run", "--all-files"], cwd: project, env: env)
        XCTAssertEqual(failing.status, 1, failing.out + failing.stderr)
        XCTAssertTrue(failing.out.contains("photos/IMG_0001.JPG"), failing.out)
        XCTAssertFalse(failing.out.contains("photos/clean.jpg"), failing.out)

        Harness.sh("git rm -q --cached photos/IMG_0001.JPG && rm photos/IMG_0001.JPG", cwd: project)
        let passing = Harness.exec("pre-commit", ["run", "--all-files"], cwd: project, env: env)
        XCTAssertEqual(passing.status, 0, passing.out + passing.stderr)
    }
}
