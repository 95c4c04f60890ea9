// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Metascrub
import MetascrubCore

struct PolicyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "policy",
        abstract: "List, show and check policies.",
        subcommands: [List.self, Show.self, Check.self]
    )

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List the shipped policies.")
        func run() throws {
            for name in PolicyCatalog.names {
                let policy = try PolicyCatalog.builtin(name)
                let marker = name == BuiltinPolicies.defaultName ? " (default)" : ""
                print("\(name)\(marker): \(policy.description)")
            }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "Print a shipped policy's YAML.")
        @Argument(help: "Policy name.", completion: .list(PolicyCatalog.names)) var name: String
        func run() throws {
            guard let source = PolicyCatalog.source(of: name) else {
                StandardError.write("metascrub: no shipped policy \(name); shipped: \(PolicyCatalog.names.joined(separator: ", "))\n")
                throw ExitCode(2)
            }
            print(source, terminator: "")
        }
    }

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "check", abstract: "Validate a policy file; errors name file, line and key.")
        @Argument(help: "Policy YAML file.", completion: .file(extensions: ["yaml", "yml"])) var file: String
        func run() throws {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
                StandardError.write("metascrub: cannot read \(file)\n")
                throw ExitCode(2)
            }
            do {
                let policy = try PolicyLoader.load(yaml: text, file: file)
                for warning in PolicyLint.warnings(yaml: text, file: file) { StandardError.write("metascrub: warning: \(warning)\n") }
                print("\(file): ok (policy \(policy.name), \(policy.categories.count) categories, \(policy.keys.count) key rules, orientation \(policy.orientation.rawValue))")
            } catch {
                StandardError.write("metascrub: \(error.description)\n")
                throw ExitCode(2)
            }
        }
    }
}
