// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubCore
import XCTest

/// What the command line turns into before any file is touched, tested as a library (no binary needed).
final class RunSetupTests: XCTestCase {
    var dir: String!

    override func setUpWithError() throws {
        dir = NSTemporaryDirectory() + "metascrub-setup-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir + "/sub", withIntermediateDirectories: true)
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    func testCommandLineOverridesTheNearestConfigFile() throws {
        try "schema: 1\npolicy: share\njobs: 3\nexclude: drafts/\nformat: sarif\n".write(toFile: dir + "/.metascrub.yaml", atomically: true, encoding: .utf8)
        let found = try RunSetup.settings(WorkflowSettings(jobs: 2), config: .discover(from: dir + "/sub"))
        XCTAssertEqual(found.policy, "share")
        XCTAssertEqual(found.jobs, 2, "the command line wins")
        XCTAssertEqual(found.exclude, ["drafts/"])
        XCTAssertEqual(found.format, .sarif)
        XCTAssertEqual(try RunSetup.settings(WorkflowSettings(jobs: 2), config: .none), WorkflowSettings(jobs: 2))
        XCTAssertEqual(try RunSetup.settings(WorkflowSettings(), config: .file(dir + "/.metascrub.yaml")).policy, "share")
        XCTAssertThrowsError(try RunSetup.settings(WorkflowSettings(), config: .file(dir + "/missing.yaml")))
    }

    func testPolicyIsAShippedNameOrAFile() throws {
        XCTAssertEqual(try RunSetup.policy("strict"), try PolicyCatalog.builtin("strict"))
        XCTAssertThrowsError(try RunSetup.policy(dir + "/nope.yaml")) { error in
            XCTAssertTrue("\(error)".contains("no such shipped policy or file"), "\(error)")
        }
        let file = dir + "/team.yaml"
        try (BuiltinPolicies.sources.first { $0.name == "share" }?.yaml ?? "").write(toFile: file, atomically: true, encoding: .utf8)
        XCTAssertNoThrow(try RunSetup.policy(file))
    }

    func testEngineOptionsFollowTheSettings() throws {
        XCTAssertThrowsError(try RunSetup.engine(WorkflowSettings(jobs: 0), showValues: false))
        let text = try RunSetup.engine(WorkflowSettings(policy: "share", jobs: 2, keepMtime: true), showValues: true)
        XCTAssertEqual(text.options.policy, try PolicyCatalog.builtin("share"))
        XCTAssertTrue(text.options.showValues)
        XCTAssertTrue(text.options.keepModificationTime)
        XCTAssertFalse(text.options.digests, "digests are only computed for a JSON report")
        XCTAssertTrue(try RunSetup.engine(WorkflowSettings(format: .json), showValues: false).options.digests)
        XCTAssertTrue(try RunSetup.engine(WorkflowSettings(), showValues: false, reportFile: "r.json").options.digests)
    }
}
