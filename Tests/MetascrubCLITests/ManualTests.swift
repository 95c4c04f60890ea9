// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import XCTest

/// The manual and the shell completions stay in step with the command tree ArgumentParser builds.
final class ManualTests: XCTestCase {
    override func setUpWithError() throws {
        try Harness.requireBinary()
    }

    /// (command path, option names) for every command, from `--experimental-dump-help`.
    func commandTree() throws -> [(String, [String])] {
        let r = Harness.metascrub(["--experimental-dump-help"])
        XCTAssertEqual(r.status, 0)
        let root = try XCTUnwrap(Harness.json(r.stdout)["command"] as? [String: Any])
        var out: [(String, [String])] = []
        func walk(_ command: [String: Any], _ path: String) {
            let name = command["commandName"] as? String ?? ""
            let full = path.isEmpty ? name : path + " " + name
            guard command["shouldDisplay"] as? Bool ?? true, name != "help" else { return }
            var options: [String] = []
            for argument in command["arguments"] as? [[String: Any]] ?? [] where argument["shouldDisplay"] as? Bool ?? true {
                for n in argument["names"] as? [[String: Any]] ?? [] {
                    let value = n["name"] as? String ?? ""
                    switch n["kind"] as? String {
                    case "long": options.append("--" + value)
                    case "short": options.append("-" + value)
                    default: break
                    }
                }
            }
            out.append((full, options))
            for sub in command["subcommands"] as? [[String: Any]] ?? [] { walk(sub, full) }
        }
        walk(root, "")
        return out
    }

    func testEveryCommandAndOptionIsInTheManPage() throws {
        let page = try String(contentsOf: Harness.repo.appendingPathComponent("man/metascrub.1"), encoding: .utf8)
        // roff writes a literal minus as `\-`; read it back as plain text.
        let text = page.replacingOccurrences(of: "\\-", with: "-")
        let tree = try commandTree()
        XCTAssertGreaterThan(tree.count, 8)
        var missing: [String] = []
        for (command, options) in tree {
            let words = command.split(separator: " ").dropFirst()
            if let last = words.last, !text.contains(".B \(words.joined(separator: " "))"), !text.contains(String(last)) {
                missing.append("command \(command)")
            }
            for option in options where !text.contains(option) { missing.append("\(command): \(option)") }
        }
        XCTAssertEqual(missing, [], "document these in man/metascrub.1")
        for section in [".SH EXIT STATUS", ".SH FILES", ".SH EXAMPLES", ".metascrub.yaml", "pre-commit", "sarif"] {
            XCTAssertTrue(page.contains(section), section)
        }
    }

    func testShippedCompletionsMatchTheCommandTree() throws {
        for (shell, file) in [("bash", "metascrub.bash"), ("zsh", "_metascrub"), ("fish", "metascrub.fish")] {
            let generated = Harness.metascrub(["--generate-completion-script", shell])
            XCTAssertEqual(generated.status, 0)
            let shipped = Harness.data(Harness.repo.appendingPathComponent("completions/\(file)").path)
            XCTAssertEqual(shipped, generated.stdout,
                           "completions/\(file) is stale: metascrub --generate-completion-script \(shell) > completions/\(file)")
        }
    }
}
