// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import XCTest

/// What a new user meets first: globs that match camera names, a repository's .git left alone, an include that
/// selects nothing failing loudly, colour only where it is wanted.
final class EverydayUseTests: XCTestCase {
    var tmp: String!

    override func setUpWithError() throws {
        try Harness.requireBinary()
        tmp = Harness.makeTemp("everyday")
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: tmp) }

    private func scannedPaths(_ args: [String]) -> [String] {
        let r = Harness.metascrub(["scan", "--json"] + args, cwd: tmp)
        return ((Harness.json(r.stdout)["files"] as? [[String: Any]]) ?? []).compactMap { $0["path"] as? String }.sorted()
    }

    func testGlobsIgnoreCase() {
        Harness.copy("jpeg/gps-full.jpg", to: "\(tmp!)/DCIM/IMG_0001.JPG")
        Harness.copy("jpeg/orient-1.jpg", to: "\(tmp!)/DCIM/img_0002.jpg")
        XCTAssertEqual(scannedPaths(["DCIM", "--include", "*.jpg"]), ["DCIM/IMG_0001.JPG", "DCIM/img_0002.jpg"])
        XCTAssertEqual(scannedPaths(["DCIM", "--exclude", "IMG_*"]), [])
    }

    func testVersionControlFoldersAreSkippedUnlessNamed() {
        Harness.copy("jpeg/gps-full.jpg", to: "\(tmp!)/site/a.jpg")
        for vcs in [".git", ".hg", ".svn"] { Harness.copy("jpeg/orient-1.jpg", to: "\(tmp!)/site/\(vcs)/objects/b.jpg") }
        XCTAssertEqual(scannedPaths(["site"]), ["site/a.jpg"])
        XCTAssertEqual(scannedPaths(["site/.git"]), ["site/.git/objects/b.jpg"], "a folder named on the command line is walked")
    }

    func testAnIncludeThatSelectsNothingIsAnError() {
        Harness.copy("jpeg/gps-full.jpg", to: "\(tmp!)/site/a.jpg")
        let none = Harness.metascrub(["scan", "site", "--include", "*.heic"], cwd: tmp)
        XCTAssertEqual(none.status, 2, none.stderr)
        XCTAssertTrue(none.stderr.contains("'*.heic' matched no file"), none.stderr)
        let clean = Harness.metascrub(["clean", "site", "--in-place", "--include", "*.heic"], cwd: tmp)
        XCTAssertEqual(clean.status, 2, clean.stderr)
        let some = Harness.metascrub(["scan", "site", "--include", "*.heic", "--include", "*.jpg"], cwd: tmp)
        XCTAssertEqual(some.status, 1, "the JPEG was still scanned: \(some.stderr)")
        XCTAssertTrue(some.stderr.contains("warning: --include '*.heic' matched no file"), some.stderr)
    }

    func testColourOnlyWhereWanted() {
        let input = Harness.fixture("jpeg/gps-full.jpg")
        let escape = "\u{1B}["
        XCTAssertFalse(Harness.metascrub(["scan", input]).out.contains(escape), "a pipe gets no colour")
        XCTAssertTrue(Harness.metascrub(["scan", input, "--color", "always"]).out.contains("\(escape)33mfindings"))
        XCTAssertFalse(Harness.metascrub(["scan", input, "--color", "never"]).out.contains(escape))
        // On a terminal (script(1) gives the process one), auto colours unless NO_COLOR is set.
        guard Harness.tool("script") else { return }
        let command = "\(Harness.binary) scan \(input)"
        let tty = Harness.exec("script", ["-qec", command, "/dev/null"], cwd: tmp, env: ["NO_COLOR": ""])
        XCTAssertTrue(tty.out.contains("\(escape)33mfindings"), tty.out)
        let noColour = Harness.exec("script", ["-qec", command, "/dev/null"], cwd: tmp, env: ["NO_COLOR": "1"])
        XCTAssertFalse(noColour.out.contains("\(escape)33m"), noColour.out)
    }
}
