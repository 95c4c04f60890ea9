// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import XCTest

/// The shipped bash and fish completions, run in a real bash (the way readline calls it) and a real fish: paths
/// complete to files and folders, --output-dir to folders only, --policy to the shipped policy names.
final class CompletionTests: XCTestCase {
    var tmp: String!

    override func setUpWithError() throws {
        try Harness.requireBinary()
        try Harness.require("bash")
        tmp = Harness.makeTemp("completion")
        Harness.copy("jpeg/gps-full.jpg", to: "\(tmp!)/photos/a.jpg")
        Harness.copy("jpeg/orient-1.jpg", to: "\(tmp!)/pic.jpg")
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: tmp) }

    /// What bash offers after `line` (the word being completed is the text after the last space).
    func complete(_ line: String) -> [String] {
        let script = Harness.repo.appendingPathComponent("completions/metascrub.bash").path
        let words = line.split(separator: " ", omittingEmptySubsequences: false).map { "'\($0)'" }.joined(separator: " ")
        let driver = """
            source "$1"
            PATH="$(dirname "$2"):$PATH"
            function=$(complete -p metascrub | sed -E 's/.*-F ([^ ]+) .*/\\1/')
            COMP_WORDS=(\(words))
            COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
            COMP_LINE="$3"
            COMP_POINT=${#COMP_LINE}
            "$function" metascrub "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let r = Harness.exec("/usr/bin/bash", ["-c", driver, "bash", script, Harness.binary, line], cwd: tmp)
        XCTAssertEqual(r.status, 0, r.stderr)
        return r.out.split(separator: "\n").map { String($0).trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.sorted()
    }

    func testBashCompletesPathsFoldersAndPolicyNames() {
        XCTAssertEqual(complete("metascrub scan --policy "), ["location", "share", "strict"])
        XCTAssertEqual(complete("metascrub scan --policy sh"), ["share"])
        let paths = complete("metascrub scan p")
        XCTAssertTrue(paths.contains("pic.jpg") && paths.contains { $0.hasPrefix("photos") }, "\(paths)")
        let folders = complete("metascrub clean pic.jpg --output-dir p")
        XCTAssertTrue(folders.contains { $0.hasPrefix("photos") }, "\(folders)")
        XCTAssertFalse(folders.contains("pic.jpg"), "--output-dir completes folders only: \(folders)")
        XCTAssertEqual(complete("metascrub policy show "), ["location", "share", "strict"])
        XCTAssertEqual(complete("metascrub scan --color "), ["always", "auto", "never"])
    }

    /// The shipped fish completion in a real fish (`complete -C` asks exactly what the command line would).
    func testFishCompletesPathsFoldersAndPolicyNames() throws {
        try Harness.require("fish")
        let script = Harness.repo.appendingPathComponent("completions/metascrub.fish").path
        func complete(_ line: String) -> [String] {
            let r = Harness.exec("fish", ["-c", "source $argv[1]; complete -C $argv[2]", script, line], cwd: tmp,
                                 env: ["PATH": (Harness.binary as NSString).deletingLastPathComponent + ":/usr/bin:/bin"])
            XCTAssertEqual(r.status, 0, r.stderr)
            return r.out.split(separator: "\n").map { String($0.split(separator: "\t").first ?? "") }.sorted()
        }
        XCTAssertEqual(complete("metascrub scan --policy "), ["location", "share", "strict"])
        XCTAssertEqual(complete("metascrub clean pic.jpg --output-dir p"), ["photos/"])
        XCTAssertEqual(complete("metascrub scan p"), ["photos/", "pic.jpg"])
        XCTAssertEqual(complete("metascrub policy show "), ["location", "share", "strict"])
    }
}
