// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Metascrub

extension HookInstaller.Mode: ExpressibleByArgument {}

struct HookCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hook",
        abstract: "Install or remove a git pre-commit hook that runs metascrub on staged files.",
        subcommands: [Install.self, Uninstall.self]
    )

    struct Install: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "install",
            abstract: "Write .git/hooks/pre-commit (or under core.hooksPath).",
            discussion: """
                check: the commit is blocked while a staged file carries metadata the policy removes \
                (scan --staged). fix: staged files are cleaned and staged again, then the commit goes on \
                (clean --staged). A hook metascrub did not write is never replaced without --force.
                """
        )

        @Option(name: .long, help: ArgumentHelp("check (block the commit) or fix (clean and re-stage).", valueName: "mode"))
        var mode: HookInstaller.Mode = .check

        @Flag(name: .long, help: "Replace a pre-commit hook metascrub did not write (it is moved aside to pre-commit.before-metascrub).")
        var force = false

        func run() throws {
            let outcome = try runUsage {
                try HookInstaller(directory: FileManager.default.currentDirectoryPath)
                    .install(mode: mode, force: force, binary: Self.executablePath())
            }
            if case .installed(let path, let backup) = outcome {
                if let backup { print("moved the existing hook to \(backup)") }
                print("installed \(path) (mode \(mode.rawValue))")
            }
        }

        /// This binary's absolute path, so the hook works whatever PATH the commit runs with.
        static func executablePath() -> String {
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        }
    }

    struct Uninstall: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "uninstall", abstract: "Remove the pre-commit hook metascrub installed (and only that).")

        func run() throws {
            let outcome = try runUsage { try HookInstaller(directory: FileManager.default.currentDirectoryPath).uninstall() }
            switch outcome {
            case .removed(let path, let restored):
                print("removed \(path)" + (restored != nil ? " (the previous hook is back)" : ""))
            case .absent(let path):
                print("no hook at \(path)")
            case .installed:
                break
            }
        }
    }
}
