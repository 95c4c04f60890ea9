// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import XCTest

/// The shipped bash, fish and zsh completions, run in a real bash (the way readline calls it), fish and zsh: paths
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

    /// zsh's completion system driven in a real interactive zsh through a pseudo-terminal (zsh/zpty): `compadd` is
    /// wrapped to print what each completer adds, the line is typed with a TAB, and the offers are read back.
    static let zshCapture = #"""
#!/usr/bin/zsh -f
# capture.zsh FPATH_DIR LINE: prints what zsh's completion system offers for LINE, one per line.
zmodload zsh/zpty || exit 2
zpty z zsh -f -i
zpty -w z "PS1= ; PROMPT= ; RPROMPT="
zpty -w z "fpath=(${(q)1} \$fpath); autoload -U compinit; compinit -u -D"
zpty -w z 'compadd () {
  if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return $?; fi
  typeset -a __hits
  builtin compadd -A __hits "$@"
  local ret=$?
  (( $#__hits )) && print -rl -- "<HI""T>"${^__hits}
  return ret
}'
zpty -w z 'finish () { print "<EN""D>"; exit }; zle -N finish; bindkey "^X" finish'
zpty -w z $'zstyle ":completion:*" list-prompt ""; zstyle ":completion:*" menu no'
zpty -n -w z "$2"$'\t'
zpty -n -w z $'\C-X'
local out line
while zpty -r z line; do
  [[ $line == *"<END>"* ]] && break
  [[ $line == *"<HIT>"* ]] && print -r -- "${${line##*<HIT>}%$'\r'}"
done
zpty -d z
"""#

    func testZshCompletesPathsFoldersAndPolicyNames() throws {
        try Harness.require("zsh")
        let capture = tmp + "/capture.zsh"
        try Self.zshCapture.write(toFile: capture, atomically: true, encoding: .utf8)
        let folder = Harness.repo.appendingPathComponent("completions").path
        func complete(_ line: String) -> [String] {
            let r = Harness.exec("zsh", ["-f", capture, folder, line], cwd: tmp,
                                 env: ["PATH": (Harness.binary as NSString).deletingLastPathComponent + ":/usr/bin:/bin"])
            XCTAssertEqual(r.status, 0, r.stderr)
            // The pseudo-terminal ends lines with CR LF, one Character to Swift.
            let lines = r.out.components(separatedBy: .newlines).map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            return Array(Set(lines.filter { !$0.isEmpty })).sorted()
        }
        XCTAssertEqual(complete("metascrub scan --policy "), ["location", "share", "strict"])
        XCTAssertEqual(complete("metascrub policy show "), ["location", "share", "strict"])
        let paths = complete("metascrub scan p")
        XCTAssertTrue(paths.contains("pic.jpg") && paths.contains("photos"), "\(paths)")
        XCTAssertTrue(complete("metascrub clean pic.jpg --output-dir p").contains("photos"))
    }
}
