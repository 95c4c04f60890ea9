// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import XCTest

/// The pre-commit workflow in a real, temporary git repository: `scan --staged`, `clean --staged`, the
/// hook metascrub installs, and the pre-commit framework running this repository's .pre-commit-hooks.yaml.
final class GitHookTests: XCTestCase {
    var repo: String!

    override func setUpWithError() throws {
        try Harness.requireBinary()
        try Harness.require("git")
        repo = Harness.makeTemp("git")
        Harness.sh("git init -q -b main .", cwd: repo)
    }

    override func tearDown() { if let repo { try? FileManager.default.removeItem(atPath: repo) } }

    func stagePhotos() {
        Harness.copy("jpeg/gps-full.jpg", to: repo + "/photo.jpg")
        Harness.copy("jpeg/xmp.jpg", to: repo + "/album/with space.jpg")
        Harness.copy("jpeg/clean.jpg", to: repo + "/clean.jpg")
        try! "notes\n".write(toFile: repo + "/notes.txt", atomically: true, encoding: .utf8)
        Harness.sh("git add .", cwd: repo)
    }

    /// The GPS tags exiftool finds in the blob staged for `path` (an independent oracle).
    func stagedGPSTags(_ path: String) -> String {
        Harness.sh("git show ':\(path)' | exiftool -q -q -s -GPS:all -", cwd: repo, check: false).out
    }

    func testCommittingAPhotoWithGPSIsBlockedWithOneLinePerFile() throws {
        stagePhotos()
        let install = Harness.metascrub(["hook", "install"], cwd: repo)
        XCTAssertEqual(install.status, 0, install.stderr)
        let commit = Harness.sh("git commit -q -m photos", cwd: repo, check: false)
        XCTAssertEqual(commit.status, 1, "the hook blocks the commit")
        // git shows a hook's output on standard error; the last line is metascrub's advice.
        let lines = commit.stderr.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("metascrub: ") }
        XCTAssertEqual(lines, [
            "album/with space.jpg: location, identity, time, software, content (strict policy: 12 items to remove)",
            "photo.jpg: location, device, identity, time, software, content, embedded, rendering, structure (strict policy: 34 items to remove)",
        ], "one line per offending file, naming its categories")
        XCTAssertTrue(commit.stderr.contains("metascrub clean --staged"), "says what to do")
        XCTAssertFalse((commit.out + commit.stderr).contains("CANARY"), "no values")
        XCTAssertEqual(Harness.sh("git rev-parse --verify -q HEAD", cwd: repo, check: false).status, 1, "nothing committed")
    }

    func testScanStagedReadsTheIndexNotTheWorkingTree() throws {
        Harness.copy("jpeg/gps-full.jpg", to: repo + "/photo.jpg")
        Harness.sh("git add photo.jpg", cwd: repo)
        Harness.copy("jpeg/clean.jpg", to: repo + "/photo.jpg")
        XCTAssertEqual(Harness.metascrub(["scan", "--staged"], cwd: repo).status, 1, "the staged blob has GPS")
        Harness.sh("git add photo.jpg && git commit -q -m clean", cwd: repo)
        Harness.copy("jpeg/gps-full.jpg", to: repo + "/photo.jpg")
        let r = Harness.metascrub(["scan", "--staged"], cwd: repo)
        XCTAssertEqual(r.status, 0, "an unstaged edit is not part of the commit: " + r.out)
        XCTAssertEqual(r.out, "")
        Harness.sh("mkdir -p sub", cwd: repo)
        Harness.sh("git add photo.jpg", cwd: repo)
        XCTAssertEqual(Harness.metascrub(["scan", "--staged", "--format", "json"], cwd: repo + "/sub").status, 1, "works from a subfolder")
    }

    func testFixModeCleansRestagesAndCommitsACleanBlob() throws {
        try Harness.require("exiftool")
        stagePhotos()
        XCTAssertFalse(stagedGPSTags("photo.jpg").isEmpty, "the fixture has GPS")
        XCTAssertEqual(Harness.metascrub(["hook", "install", "--mode", "fix"], cwd: repo).status, 0)
        let commit = Harness.sh("git commit -q -m photos", cwd: repo, check: false)
        XCTAssertEqual(commit.status, 0, commit.out + commit.stderr)
        XCTAssertTrue(commit.stderr.contains("photo.jpg: cleaned: location"), commit.stderr)
        XCTAssertEqual(Harness.sh("git show HEAD:photo.jpg | exiftool -q -q -s -GPS:all -", cwd: repo).out, "", "the commit holds a clean blob")
        XCTAssertEqual(Harness.sh("git show HEAD:album/with\\ space.jpg | exiftool -q -q -s -XMP:all -", cwd: repo).out, "")
        XCTAssertEqual(Harness.sh("git status --porcelain", cwd: repo).out, "", "working tree and index agree")
        let cleanBlob = Harness.sh("git show HEAD:clean.jpg", cwd: repo).stdout
        XCTAssertEqual(cleanBlob, Harness.data(Harness.fixture("jpeg/clean.jpg")), "an already clean file is untouched")
    }

    /// The loop ends (issue 14): a portrait phone photo whose orientation cannot be baked exactly is committed
    /// through fix mode, and check mode then accepts what fix mode produced, as do `scan` and `clean --staged`.
    func testARotatedPhotoCommittedInFixModePassesCheckMode() throws {
        try Harness.require("exiftool")
        Harness.copy("jpeg/orient-6.jpg", to: repo + "/portrait.jpg")
        Harness.sh("git add portrait.jpg", cwd: repo)
        XCTAssertEqual(Harness.metascrub(["hook", "install", "--mode", "fix"], cwd: repo).status, 0)
        let fix = Harness.sh("git commit -q -m portrait", cwd: repo, check: false)
        XCTAssertEqual(fix.status, 0, fix.out + fix.stderr)
        XCTAssertEqual(Harness.sh("git show HEAD:portrait.jpg | exiftool -q -q -s -GPS:all -", cwd: repo).out, "", "GPS is gone")
        XCTAssertEqual(Harness.sh("git show HEAD:portrait.jpg | exiftool -q -q -s3 -n -Orientation -", cwd: repo).out, "6\n",
                       "the orientation stays, so the photo still displays upright")
        XCTAssertEqual(Harness.metascrub(["hook", "uninstall"], cwd: repo).status, 0)
        XCTAssertEqual(Harness.metascrub(["hook", "install", "--mode", "check"], cwd: repo).status, 0)
        try "again\n".write(toFile: repo + "/notes.txt", atomically: true, encoding: .utf8)
        Harness.sh("git add notes.txt", cwd: repo)
        // Touching the photo stages the same bytes again: check mode must accept what fix mode produced.
        Harness.sh("touch portrait.jpg && git add portrait.jpg", cwd: repo)
        let scan = Harness.metascrub(["scan", "--staged"], cwd: repo)
        XCTAssertEqual(scan.status, 0, scan.out + scan.stderr)
        let check = Harness.sh("git commit -q -m notes", cwd: repo, check: false)
        XCTAssertEqual(check.status, 0, "check mode accepts fix mode's output: " + check.out + check.stderr)
        let again = Harness.metascrub(["clean", "--staged"], cwd: repo)
        XCTAssertEqual(again.status, 0, again.out + again.stderr)
        XCTAssertEqual(Harness.sh("git status --porcelain", cwd: repo).out, "", "clean --staged changed nothing")
    }

    func testAPartiallyStagedFileIsRefused() throws {
        Harness.copy("jpeg/gps-full.jpg", to: repo + "/photo.jpg")
        Harness.sh("git add photo.jpg", cwd: repo)
        Harness.copy("jpeg/xmp.jpg", to: repo + "/photo.jpg") // a further edit, not staged
        let before = Harness.data(repo + "/photo.jpg")
        let index = Harness.sh("git ls-files -s photo.jpg", cwd: repo).out
        let r = Harness.metascrub(["clean", "--staged"], cwd: repo)
        XCTAssertEqual(r.status, 3)
        XCTAssertTrue(r.out.contains("photo.jpg: error: partially staged"), r.out)
        XCTAssertEqual(Harness.data(repo + "/photo.jpg"), before, "working tree untouched")
        XCTAssertEqual(Harness.sh("git ls-files -s photo.jpg", cwd: repo).out, index, "index untouched")
    }

    func testHookInstallNeverReplacesAForeignHookAndFollowsHooksPath() throws {
        let hooks = repo + "/.git/hooks"
        try FileManager.default.createDirectory(atPath: hooks, withIntermediateDirectories: true)
        try "#!/bin/sh\necho mine\n".write(toFile: hooks + "/pre-commit", atomically: true, encoding: .utf8)
        let refused = Harness.metascrub(["hook", "install"], cwd: repo)
        XCTAssertEqual(refused.status, 2)
        XCTAssertTrue(refused.stderr.contains("--force"), refused.stderr)
        XCTAssertEqual(try String(contentsOfFile: hooks + "/pre-commit", encoding: .utf8), "#!/bin/sh\necho mine\n")
        XCTAssertEqual(Harness.metascrub(["hook", "uninstall"], cwd: repo).status, 2, "not ours to remove")

        XCTAssertEqual(Harness.metascrub(["hook", "install", "--force"], cwd: repo).status, 0)
        let ours = try String(contentsOfFile: hooks + "/pre-commit", encoding: .utf8)
        XCTAssertTrue(ours.contains("metascrub-hook: managed"))
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: hooks + "/pre-commit"))
        XCTAssertEqual(Harness.metascrub(["hook", "install", "--mode", "fix"], cwd: repo).status, 0, "its own hook is replaced freely")
        XCTAssertEqual(Harness.metascrub(["hook", "uninstall"], cwd: repo).status, 0)
        XCTAssertEqual(try String(contentsOfFile: hooks + "/pre-commit", encoding: .utf8), "#!/bin/sh\necho mine\n", "the old hook is back")

        Harness.sh("git config core.hooksPath .githooks", cwd: repo)
        XCTAssertEqual(Harness.metascrub(["hook", "install"], cwd: repo).status, 0)
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: repo + "/.githooks/pre-commit"), "core.hooksPath is respected")
        XCTAssertEqual(Harness.metascrub(["hook", "uninstall"], cwd: repo).status, 0)
        XCTAssertFalse(Harness.exists(repo + "/.githooks/pre-commit"))
    }

    /// The pre-commit framework runs both hooks as defined in this repository's .pre-commit-hooks.yaml
    /// (`language: system`, the installed binary). The test keeps every field of each hook but points `entry` at
    /// the binary these tests just built, so it checks the ids, the `files:` pattern, the arguments and the exit
    /// codes the framework sees.
    func testPreCommitFrameworkRunsBothHooksFromThisRepository() throws {
        try Harness.require("pre-commit")
        let hooks = try String(contentsOf: Harness.repo.appendingPathComponent(".pre-commit-hooks.yaml"), encoding: .utf8)
        XCTAssertEqual(hooks.components(separatedBy: "\n  language: system\n").count - 1, 2, "both hooks run the installed binary")
        let local = hooks.split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.hasPrefix("#") }
            .map { line -> String in
                var l = String(line)
                if let range = l.range(of: "entry: metascrub ") {
                    // Quoted as a whole: pre-commit splits `entry` like a shell would.
                    l = l.replacingCharacters(in: range, with: "entry: \"'\(Harness.binary)' ") + "\""
                }
                return l.isEmpty ? l : "    " + l
            }.joined(separator: "\n")
        try ("repos:\n  - repo: local\n    hooks:\n" + local).write(toFile: repo + "/.pre-commit-config.yaml", atomically: true, encoding: .utf8)
        stagePhotos()
        Harness.copy("jpeg/gps-full.jpg", to: repo + "/UPPER.JPEG")
        Harness.sh("git add .", cwd: repo)
        let env = ["PRE_COMMIT_HOME": repo + "/.cache-pre-commit", "PRE_COMMIT_COLOR": "never", "SKIP": ""]
        try "/.cache-pre-commit/\n".write(toFile: repo + "/.git/info/exclude", atomically: true, encoding: .utf8)

        let check = Harness.exec("pre-commit", ["run", "metascrub-check", "--all-files"], cwd: repo, env: env)
        XCTAssertEqual(check.status, 1, check.out + check.stderr)
        XCTAssertTrue(check.out.contains("photo.jpg: location"), check.out)
        XCTAssertTrue(check.out.contains("UPPER.JPEG: location"), "files: is case-insensitive: " + check.out)
        XCTAssertFalse(check.out.contains("notes.txt"))

        let fix = Harness.exec("pre-commit", ["run", "metascrub-clean", "--all-files"], cwd: repo, env: env)
        XCTAssertEqual(fix.status, 1, "a fix hook that changed files fails, as the framework expects: " + fix.out)
        XCTAssertTrue(fix.out.contains("files were modified by this hook") || fix.out.contains("photo.jpg: cleaned"), fix.out)
        XCTAssertEqual(Harness.metascrub(["scan", repo + "/photo.jpg", repo + "/UPPER.JPEG"]).status, 0, "cleaned in place")

        Harness.sh("git add -u", cwd: repo)
        let again = Harness.exec("pre-commit", ["run", "--all-files"], cwd: repo, env: env)
        XCTAssertEqual(again.status, 0, "both pass once clean: " + again.out)

        // And through git itself: the framework's own pre-commit hook.
        Harness.sh("pre-commit install -q || pre-commit install", cwd: repo, env: env)
        Harness.copy("jpeg/gps-full.jpg", to: repo + "/new.jpg")
        Harness.sh("git add new.jpg", cwd: repo)
        XCTAssertNotEqual(Harness.sh("git commit -q -m new", cwd: repo, check: false, env: env).status, 0, "blocked by the framework")
    }
}
