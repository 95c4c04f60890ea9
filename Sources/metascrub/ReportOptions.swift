// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Metascrub
import MetascrubCore

extension ReportFormat: ExpressibleByArgument {}

/// Options every file command shares: policy, report format and destination, verbosity.
struct ReportOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Policy: a shipped name (strict, share, location) or a YAML file.", valueName: "name|file"))
    var policy: String = BuiltinPolicies.defaultName

    @Option(name: .long, help: "Report format on standard output: text, json or sarif.")
    var format: ReportFormat = .text

    @Flag(name: .long, help: "Shorthand for --format json.")
    var json = false

    @Option(name: .long, help: ArgumentHelp("Also write the report to this file (format from its extension: .json, .sarif, else text).", valueName: "file"))
    var report: String?

    @Flag(name: [.short, .long], help: "Print nothing on standard output; errors still go to standard error.")
    var quiet = false

    @Flag(name: [.short, .long], help: "Also list kept items, notes, policy rules and verification.")
    var verbose = false

    @Flag(name: .long, help: "Print metadata values (GPS positions, serial numbers). Off by default: values never reach logs.")
    var showValues = false

    @Option(name: .long, help: "Files processed in parallel (default: the number of cores).")
    var jobs: Int = Engine.defaultJobs

    var effectiveFormat: ReportFormat { json ? .json : format }

    func loadPolicy() throws -> Policy {
        do {
            if PolicyCatalog.names.contains(policy) { return try PolicyCatalog.builtin(policy) }
            guard FileManager.default.fileExists(atPath: policy) else {
                throw MetascrubError.policy(file: policy, line: nil, key: nil,
                                            message: "no such shipped policy or file; shipped: \(PolicyCatalog.names.joined(separator: ", "))")
            }
            let text = try String(contentsOfFile: policy, encoding: .utf8)
            return try PolicyLoader.load(yaml: text, file: policy)
        } catch let error as MetascrubError {
            throw CLIError.usage(error.description)
        } catch {
            throw CLIError.usage("cannot read policy \(policy)")
        }
    }

    func engine() throws -> Engine {
        guard jobs >= 1 else { throw CLIError.usage("--jobs must be at least 1") }
        return Engine(options: ProcessingOptions(policy: try loadPolicy(), showValues: showValues), jobs: jobs)
    }

    /// Prints the report as asked and returns nothing; errors for files go to stderr when stdout is not text.
    func emit(_ report: Report) throws {
        if !quiet {
            print(try effectiveFormat.renderer(verbose: verbose).render(report), terminator: "")
        }
        if quiet || effectiveFormat != .text {
            for file in report.files where file.status == .error {
                StandardError.write("metascrub: \(file.path): \(file.error?.message ?? "failed")\n")
            }
        }
        if let path = self.report {
            let format: ReportFormat = path.hasSuffix(".json") ? .json : path.hasSuffix(".sarif") ? .sarif : .text
            let text = try format.renderer(verbose: true).render(report)
            do {
                try text.write(toFile: path, atomically: true, encoding: .utf8)
            } catch {
                throw CLIError.usage("cannot write report to \(path)")
            }
        }
    }
}

enum CLIError: Error, CustomStringConvertible {
    case usage(String)
    var description: String {
        switch self {
        case .usage(let message): message
        }
    }
}

enum StandardError {
    static func write(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}

/// Maps library outcomes onto the exit-status contract (2 for usage and policy errors).
func exitStatusCode(_ status: ExitStatus) -> ExitCode { ExitCode(status.rawValue) }

func runUsage<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as CLIError {
        StandardError.write("metascrub: \(error.description)\n")
        throw ExitCode(ExitStatus.usage.rawValue)
    }
}
