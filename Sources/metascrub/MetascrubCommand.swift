// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Metascrub

@main
struct MetascrubCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "metascrub",
        abstract: "Find and remove privacy-sensitive metadata from photos, videos and audio, losslessly.",
        discussion: """
            Exit status: 0 nothing to report, 1 findings (scan) or changed files (clean --exit-code), \
            2 usage or policy error, 3 at least one file could not be read, checked or cleaned (or its output path \
            was refused), 4 the report could not be written, 130/143 interrupted by SIGINT/SIGTERM (this run's \
            temporary files removed).
            """,
        version: MetascrubVersion.current,
        // Every command names itself (`commandName`): a name derived from the type is a `String(describing:)` at each
        // start, whose protocol-conformance lookups were a sixteenth of a one-file run's CPU (issue 25, round 3).
        subcommands: [ScanCommand.self, CleanCommand.self, HookCommand.self, PolicyCommand.self, FormatsCommand.self, ServeLauncher.self, WorkerCommand.self]
    )

    /// Usage errors exit 2, as the documented contract says (ArgumentParser's default is 64).
    static func main() async {
        // Answered before ArgumentParser builds the command tree, which costs more than the answer (issue 19).
        if CommandLine.arguments.dropFirst() == ["--version"] {
            print(MetascrubVersion.current)
            return
        }
        do {
            // Everything after `serve`, --help included, is metascrub-serve's to parse.
            if CommandLine.arguments.dropFirst().first == "serve" {
                try ServeLauncher.exec(Array(CommandLine.arguments.dropFirst(2)))
            }
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            if exitCode(for: error) == .validationFailure {
                StandardError.write(fullMessage(for: error) + "\n")
                Self.exit(withError: ExitCode(ExitStatus.usage.rawValue))
            }
            Self.exit(withError: error)
        }
    }
}
