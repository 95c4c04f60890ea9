// SPDX-License-Identifier: GPL-3.0-or-later
import XCTest
@testable import Metascrub

/// The pieces of the folder workflow that need no binary: globs, the config file, the progress line.
final class WorkflowUnitTests: XCTestCase {
    func testGlobsFollowGitignoreRules() {
        XCTAssertTrue(Glob("*.jpg").matches("a/b/c.jpg"), "no slash: the name at any depth")
        XCTAssertFalse(Glob("*.jpg").matches("a/b/c.png"))
        XCTAssertTrue(Glob("site/*.jpg").matches("site/x.jpg"))
        XCTAssertFalse(Glob("site/*.jpg").matches("site/sub/x.jpg"), "* does not cross /")
        XCTAssertFalse(Glob("site/*.jpg").matches("other/site/x.jpg"), "a slash anchors at the root")
        XCTAssertTrue(Glob("**/*.jpg").matches("x.jpg"), "** matches no folder too")
        XCTAssertTrue(Glob("**/raw/*").matches("a/b/raw/x.cr2"))
        XCTAssertTrue(Glob("drafts/").matches("drafts"), "a trailing slash covers the folder")
        XCTAssertTrue(Glob("drafts/").matches("x/drafts/y/z.jpg"))
        XCTAssertTrue(Glob("/top.jpg").matches("top.jpg"))
        XCTAssertTrue(Glob("IMG_[0-9]*.jpg").matches("IMG_0001.jpg"))
        let filter = PathFilter(include: [Glob("*.jpg")], exclude: [Glob("private/")])
        XCTAssertTrue(filter.acceptsFile("a/x.jpg"))
        XCTAssertFalse(filter.acceptsFile("private/x.jpg"))
        XCTAssertFalse(filter.entersFolder("private"))
        XCTAssertFalse(filter.acceptsFile("a/x.txt"))
    }

    func testConfigFileIsValidatedWithLineNumbers() throws {
        let config = try WorkflowConfig.parse("schema: 1\npolicy: team.yaml\nexclude: drafts/\njobs: 3\nkeep-mtime: true\nformat: sarif\n", path: "/p/.metascrub.yaml")
        XCTAssertEqual(config.settings.policy, "/p/team.yaml", "a policy file is relative to the config")
        XCTAssertEqual(config.settings.exclude, ["drafts/"])
        XCTAssertEqual(config.settings.jobs, 3)
        XCTAssertEqual(config.settings.keepMtime, true)
        XCTAssertEqual(config.settings.format, .sarif)
        let merged = config.settings.overridden(by: WorkflowSettings(policy: "share", jobs: 1))
        XCTAssertEqual(merged.policy, "share")
        XCTAssertEqual(merged.jobs, 1)
        XCTAssertEqual(merged.exclude, ["drafts/"])
        for (text, expected) in [
            ("policy: strict\n", ".metascrub.yaml:1: schema: missing"),
            ("schema: 1\n\nkeep-mtime: maybe\n", ".metascrub.yaml:3: keep-mtime: must be true or false"),
            ("schema: 1\nexclude: [1, [2]]\n", ".metascrub.yaml:2: exclude: each pattern must be text"),
            ("schema: 1\nformat: xml\n", ".metascrub.yaml:2: format: must be one of"),
            ("schema: 1\nschema: 1\n", "given twice"),
            ("schema: [\n", ".metascrub.yaml:"),
        ] {
            XCTAssertThrowsError(try WorkflowConfig.parse(text, path: ".metascrub.yaml")) { error in
                XCTAssertTrue("\(error)".contains(expected), "\(error) should contain \(expected)")
            }
        }
    }

    func testProgressLineFitsAndEstimates() {
        let line = ProgressMeter.line(files: 50, totalFiles: 200, bytes: 25_000_000, totalBytes: 100_000_000, elapsed: 5, width: 100)
        XCTAssertLessThan(line.count, 100)
        XCTAssertTrue(line.hasPrefix(" 25% ["), line)
        XCTAssertTrue(line.contains("50/200 files  25.0 MB/100.0 MB  5.0 MB/s  ETA 0:15"), line)
        XCTAssertTrue(ProgressMeter.line(files: 3, totalFiles: 3, bytes: 10, totalBytes: 10, elapsed: 1, width: 80).hasSuffix("done"))
        XCTAssertFalse(line.contains("\r"), "control characters are added by the meter, not the line")
    }

    func testOutputTargetsNeverLeaveTheOutputFolder() {
        for bad in ["../x.jpg", "a/../../x.jpg", "/etc/passwd", "a//b", ".", ""] {
            XCTAssertThrowsError(try OutputTarget.inside("/tmp/out", bad), bad)
        }
        XCTAssertEqual(try OutputTarget.inside("/tmp/metascrub-never-there", "a/b c.jpg"), "/tmp/metascrub-never-there/a/b c.jpg")
    }
}
