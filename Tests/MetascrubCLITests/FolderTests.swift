// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import XCTest

/// The pre-publish workflow: a folder cleaned into a mirror (or in place), with symlinks, non-media files and
/// a camera raw in it; config files, globs, stdin/stdout, and the progress bar.
final class FolderTests: XCTestCase {
    var tmp: String!

    override func setUpWithError() throws {
        try Harness.requireBinary()
        tmp = Harness.makeTemp("folder")
    }

    override func tearDown() { if let tmp { try? FileManager.default.removeItem(atPath: tmp) } }

    /// site/ with nested folders, a non-media file, a raw, a link out of the tree and a link inside it.
    func makeSite() -> String {
        let site = tmp + "/site"
        Harness.copy("jpeg/gps-full.jpg", to: site + "/gps-full.jpg")
        Harness.copy("jpeg/clean.jpg", to: site + "/a/clean.jpg")
        Harness.copy("jpeg/xmp.jpg", to: site + "/a/b/deep photo.jpg")
        Harness.copy("misc/readme.txt", to: site + "/a/readme.txt")
        Harness.copy("workflow/fake.cr2", to: site + "/a/b/fake.cr2")
        Harness.copy("jpeg/iptc.jpg", to: tmp + "/outside/secret.jpg")
        try! FileManager.default.createSymbolicLink(atPath: site + "/leak.jpg", withDestinationPath: "../outside/secret.jpg")
        try! FileManager.default.createSymbolicLink(atPath: site + "/a/same.jpg", withDestinationPath: "clean.jpg")
        return site
    }

    func files(_ report: [String: Any]) -> [[String: Any]] { report["files"] as? [[String: Any]] ?? [] }

    func testOutputDirMirrorsTheTreeRefusesRawsAndNeverFollowsLinksOut() throws {
        let site = makeSite()
        let out = tmp + "/out"
        // The fake raw has no raw data LibRaw recognises: cleaned with a damaged-input note by default, refused
        // under --refuse-damaged, and then an error: copying it would publish its metadata.
        let r = Harness.metascrub(["clean", site, "--output-dir", out, "--json", "--refuse-damaged"])
        XCTAssertEqual(r.status, 3, "the raw is an error: copying it would publish its metadata")
        let report = Harness.json(r.stdout)
        let byPath = Dictionary(uniqueKeysWithValues: files(report).map { (($0["path"] as! String).replacingOccurrences(of: site + "/", with: ""), $0) })
        XCTAssertEqual(files(report).map { ($0["path"] as! String).replacingOccurrences(of: site + "/", with: "") },
                       ["a/b/deep photo.jpg", "a/b/fake.cr2", "a/clean.jpg", "a/readme.txt", "a/same.jpg", "gps-full.jpg", "leak.jpg"],
                       "every entry reported, in path order")
        XCTAssertEqual(byPath["a/b/fake.cr2"]?["status"] as? String, "error")
        XCTAssertEqual(byPath["leak.jpg"]?["status"] as? String, "skipped")
        XCTAssertTrue((byPath["leak.jpg"]?["reason"] as? String ?? "").contains("outside"))
        XCTAssertEqual(byPath["a/same.jpg"]?["status"] as? String, "skipped")

        XCTAssertEqual(Harness.metascrub(["scan", out + "/gps-full.jpg"]).status, 0, "cleaned")
        XCTAssertEqual(Harness.metascrub(["scan", out + "/a/b/deep photo.jpg"]).status, 0, "cleaned, odd name and all")
        XCTAssertEqual(Harness.data(out + "/a/clean.jpg"), Harness.data(site + "/a/clean.jpg"), "already clean: copied")
        XCTAssertEqual(Harness.data(out + "/a/readme.txt"), Harness.data(site + "/a/readme.txt"), "non-media copied unchanged")
        XCTAssertFalse(Harness.exists(out + "/a/b/fake.cr2"), "the raw is not published")
        XCTAssertFalse(Harness.exists(out + "/leak.jpg"), "nothing from outside the tree")
        XCTAssertFalse(Harness.exists(out + "/a/same.jpg"))
        XCTAssertEqual(Harness.data(tmp + "/outside/secret.jpg"), Harness.data(Harness.fixture("jpeg/iptc.jpg")), "the link's target untouched")

        let allowed = Harness.metascrub(["clean", site, "--output-dir", tmp + "/out2", "--allow-uncleaned", "--refuse-damaged"])
        XCTAssertEqual(allowed.status, 0, allowed.out + allowed.stderr)
        XCTAssertEqual(Harness.data(tmp + "/out2/a/b/fake.cr2"), Harness.data(site + "/a/b/fake.cr2"), "copied unchanged when allowed")
        XCTAssertTrue(allowed.out.contains("fake.cr2: skipped [cr2]") && allowed.out.contains("its metadata is still there"), allowed.out)
    }

    func testReportOrderDoesNotDependOnJobs() {
        let site = makeSite()
        let one = Harness.metascrub(["scan", site, "--json", "--jobs", "1"])
        let many = Harness.metascrub(["scan", site, "--json", "--jobs", "8"])
        XCTAssertEqual(one.status, 1)
        XCTAssertEqual(files(Harness.json(one.stdout)).map { $0["path"] as! String }, files(Harness.json(many.stdout)).map { $0["path"] as! String })
        XCTAssertEqual(one.out, many.out, "the whole report is the same")
    }

    func testInPlaceKeepsModeAndWithKeepMtimeTheTimes() throws {
        let site = makeSite()
        let photo = site + "/gps-full.jpg"
        try FileManager.default.setAttributes([.posixPermissions: 0o640, .modificationDate: Date(timeIntervalSince1970: 1_000_000_000)], ofItemAtPath: photo)
        let r = Harness.metascrub(["clean", site, "--in-place", "--keep-mtime", "--exclude", "*.cr2"])
        XCTAssertEqual(r.status, 0, "non-media files and links in a folder are not errors in place: " + r.out + r.stderr)
        let attributes = try FileManager.default.attributesOfItem(atPath: photo)
        XCTAssertEqual(attributes[.posixPermissions] as? Int, 0o640)
        XCTAssertEqual((attributes[.modificationDate] as? Date)?.timeIntervalSince1970, 1_000_000_000)
        XCTAssertEqual(Harness.metascrub(["scan", photo]).status, 0)
        XCTAssertEqual(Harness.data(site + "/a/b/fake.cr2"), Harness.data(Harness.fixture("workflow/fake.cr2")), "excluded")
    }

    func testAnOutputFolderInsideTheInputIsNotWalkedAndLinksInItAreNotWrittenThrough() throws {
        let site = makeSite()
        try FileManager.default.removeItem(atPath: site + "/a/b/fake.cr2")
        XCTAssertEqual(Harness.metascrub(["clean", ".", "--output-dir", "public"], cwd: site).status, 0)
        let second = Harness.metascrub(["clean", ".", "--output-dir", "public", "--json"], cwd: site)
        XCTAssertEqual(second.status, 0)
        XCTAssertFalse(files(Harness.json(second.stdout)).contains { ($0["path"] as! String).contains("public/") }, "its own output is not an input")

        // A folder inside OUT that is really a link elsewhere must not carry writes out of OUT.
        let out = tmp + "/trap"
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: tmp + "/elsewhere", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: out + "/a", withDestinationPath: tmp + "/elsewhere")
        let r = Harness.metascrub(["clean", site, "--output-dir", out, "--exclude", "public"])
        XCTAssertEqual(r.status, 3)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: tmp + "/elsewhere"), [], "nothing written through the link")
        XCTAssertTrue(r.out.contains("not a real folder inside the output folder"), r.out)
    }

    func testIncludeExcludeAndTheConfigFile() throws {
        let site = makeSite()
        try "schema: 1\npolicy: share\nexclude: [\"b/\"]\n".write(toFile: tmp + "/.metascrub.yaml", atomically: true, encoding: .utf8)
        let r = Harness.metascrub(["scan", ".", "--json"], cwd: site)
        let report = Harness.json(r.stdout)
        XCTAssertEqual((report["policy"] as? [String: Any])?["name"] as? String, "share", "found by walking up")
        XCTAssertFalse(files(report).contains { ($0["path"] as! String).contains("a/b/") }, "excluded by the config")
        let cli = Harness.json(Harness.metascrub(["scan", ".", "--json", "--policy", "strict", "--include", "**/*.jpg", "--exclude", "gps-*"], cwd: site).stdout)
        XCTAssertEqual((cli["policy"] as? [String: Any])?["name"] as? String, "strict", "the command line wins")
        XCTAssertEqual(files(cli).map { $0["path"] as! String }, ["./a/b/deep photo.jpg", "./a/clean.jpg", "./a/same.jpg", "./leak.jpg"])
        XCTAssertEqual(Harness.metascrub(["scan", ".", "--json", "--no-config"], cwd: site).status, 1)

        try "schema: 1\njobs: many\n".write(toFile: tmp + "/.metascrub.yaml", atomically: true, encoding: .utf8)
        let bad = Harness.metascrub(["scan", "."], cwd: site)
        XCTAssertEqual(bad.status, 2)
        XCTAssertTrue(bad.stderr.contains(".metascrub.yaml:2: jobs:"), bad.stderr)
        try "schema: 9\n".write(toFile: tmp + "/.metascrub.yaml", atomically: true, encoding: .utf8)
        XCTAssertTrue(Harness.metascrub(["scan", "."], cwd: site).stderr.contains("version 9 is not supported"))
    }

    func testStandardInputToStandardOutput() throws {
        let input = try XCTUnwrap(Harness.data(Harness.fixture("jpeg/gps-full.jpg")))
        let r = Harness.metascrub(["clean", "-", "--output", "-"], cwd: tmp, input: input)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(Array(r.stdout.prefix(3)), [0xFF, 0xD8, 0xFF], "standard output carries only the image")
        XCTAssertTrue(r.stderr.contains("-: cleaned [jpeg]"), "the report goes to standard error")
        try r.stdout.write(to: URL(fileURLWithPath: tmp + "/piped.jpg"))
        XCTAssertEqual(Harness.metascrub(["scan", tmp + "/piped.jpg"]).status, 0)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: tmp), ["piped.jpg"], "no temp file anywhere near")

        let text = Harness.metascrub(["clean", "-", "--output", "-"], input: Data("hello".utf8))
        XCTAssertEqual(text.status, 3)
        XCTAssertTrue(text.stdout.isEmpty, "nothing written when the input cannot be cleaned")
        XCTAssertEqual(Harness.metascrub(["scan", "-"], input: input).status, 1)
    }

    func testProgressBarOnlyOnATerminal() throws {
        let site = makeSite()
        let piped = Harness.metascrub(["clean", site, "--output-dir", tmp + "/o1", "--allow-uncleaned"])
        XCTAssertFalse(piped.stderr.contains("\r"), "no bar when standard error is not a terminal")
        try Harness.require("script")
        let command = "'\(Harness.binary)' clean '\(site)' --output-dir '\(tmp!)/o2' --allow-uncleaned > /dev/null"
        let tty = Harness.exec("script", ["-qec", command, "/dev/null"], cwd: tmp)
        XCTAssertEqual(tty.status, 0, tty.out)
        XCTAssertTrue(tty.out.contains("\r") && tty.out.contains("files") && tty.out.contains("%"), tty.out)
        XCTAssertTrue(tty.out.contains("files scanned") && tty.out.contains("already clean") && tty.out.contains("metadata removed"), tty.out)
        let quiet = Harness.exec("script", ["-qec", command.replacingOccurrences(of: "o2", with: "o3") + " --quiet", "/dev/null"], cwd: tmp)
        XCTAssertFalse(quiet.out.contains("files scanned"), "--quiet: no bar, no summary")
    }
}
