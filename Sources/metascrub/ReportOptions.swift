// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Metascrub
import MetascrubCore
import MetascrubFormats

extension ReportFormat: ExpressibleByArgument {}

/// Options every file command shares: policy, config, file selection, report format and destination,
/// verbosity. Options left out fall back to `.metascrub.yaml`, then to the built-in defaults.
struct ReportOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Policy: a shipped name (strict, share, location) or a YAML file. Default: strict.", valueName: "name|file"),
            completion: .list(PolicyCatalog.names))
    var policy: String?

    @Option(name: .long, help: ArgumentHelp("Report format on standard output: text, json, sarif or brief (one line per file that needs attention).", valueName: "format"))
    var format: ReportFormat?

    @Flag(name: .long, help: "Shorthand for --format json.")
    var json = false

    @Option(name: .long, help: ArgumentHelp("Also write the report to this file (format from its extension: .json, .sarif, else text).", valueName: "file"),
            completion: .file())
    var report: String?

    @Option(name: .customLong("color"), help: ArgumentHelp("Colour the text report: auto (a terminal, unless NO_COLOR is set), always or never.", valueName: "when"))
    var color: ColorChoice = .auto

    @Flag(name: [.short, .long], help: "Print nothing on standard output and no progress bar; errors still go to standard error.")
    var quiet = false

    @Flag(name: [.short, .long], help: "Also list kept items, notes, policy rules and verification.")
    var verbose = false

    @Flag(name: .long, help: "Print metadata values (GPS positions, serial numbers). Off by default: values never reach logs.")
    var showValues = false

    @Flag(name: .long, help: "Refuse damaged files (cut or corrupt in their media data) instead of cleaning their metadata and copying the damaged part unchanged.")
    var refuseDamaged = false

    @Option(name: .long, help: ArgumentHelp("Files processed in parallel (default: the number of cores).", valueName: "n"))
    var jobs: Int?

    @Option(name: .long, help: ArgumentHelp("Only files matching this glob, relative to the folder given (repeatable; `**` matches any folders).", valueName: "glob"))
    var include: [String] = []

    @Option(name: .long, help: ArgumentHelp("Leave out files and folders matching this glob (repeatable).", valueName: "glob"))
    var exclude: [String] = []

    @Option(name: .long, help: ArgumentHelp("Read settings from this file instead of the nearest .metascrub.yaml.", valueName: "file"),
            completion: .file(extensions: ["yaml", "yml"]))
    var config: String?

    @Option(name: .long, help: ArgumentHelp("Most pixels any whole-image decode may have (bake proofs, re-encodes, conversions); above it a bake keeps its tag and a re-encode is refused. Default: the policy's max-pixels, else 100000000.", valueName: "n"))
    var maxPixels: Int?

    @Flag(name: .long, help: "Ignore .metascrub.yaml files.")
    var noConfig = false

    /// The command line over the config file over the defaults; `extra` carries clean-only flags.
    func settings(_ extra: WorkflowSettings = WorkflowSettings()) throws -> WorkflowSettings {
        try runUsage {
            var cli = extra
            cli.policy = policy
            cli.include = include.isEmpty ? nil : include
            cli.exclude = exclude.isEmpty ? nil : exclude
            cli.jobs = jobs
            if json, let format, format != .json {
                throw CLIError.usage("--json and --format \(format.rawValue) contradict each other; give one")
            }
            cli.format = json ? .json : format
            let source: RunSetup.ConfigSource = noConfig ? .none
                : config.map { .file($0) } ?? .discover(from: FileManager.default.currentDirectoryPath)
            do throws(MetascrubError) {
                return try RunSetup.settings(cli, config: source)
            } catch {
                throw CLIError.usage(error.description)
            }
        }
    }

    func engine(_ settings: WorkflowSettings, layout: LayoutOptions = LayoutOptions()) throws -> Engine {
        try runUsage { () throws -> Engine in
            var engine = try RunSetup.engine(settings, showValues: showValues, layout: layout, reportFile: report, refuseDamaged: refuseDamaged)
            if let maxPixels {
                guard maxPixels >= 1 else { throw CLIError.usage("--max-pixels must be at least 1") }
                engine.options.policy.maxPixels = maxPixels
            }
            return engine
        }
    }

    /// The files a walk selects. An --include that selects nothing is a usage error (a CI gate that checks no file
    /// must not pass); one pattern of several that matches nothing is a warning (likely a typo).
    func expand(_ paths: [String], _ settings: WorkflowSettings, skipFolders: [String] = []) throws -> [InputFile] {
        let filter = settings.filter
        let files = InputWalker.expand(paths, options: WalkOptions(filter: filter, skipFolders: skipFolders))
        guard !filter.include.isEmpty else { return files }
        let selected = files.filter { $0.problem == nil }.map(\.relative)
        let unmatched = filter.include.filter { glob in !selected.contains { glob.matches($0) } }
        if selected.isEmpty {
            let globs = filter.include.map { "'\($0.pattern)'" }.joined(separator: ", ")
            try runUsage { () throws -> Void in throw CLIError.usage("--include \(globs) matched no file under \(paths.joined(separator: " "))") }
        }
        if !quiet {
            for glob in unmatched { StandardError.write("metascrub: warning: --include '\(glob.pattern)' matched no file\n") }
        }
        return files
    }

    /// A progress bar, only for someone watching a terminal.
    func progressMeter() -> ProgressMeter? {
        guard !quiet, StandardStreams.stderrIsTerminal else { return nil }
        return ProgressMeter(width: StandardStreams.stderrColumns) { StandardError.write($0) }
    }

    /// The closing summary, after the report, when the bar was shown (someone is watching the terminal).
    func summarise(_ report: Report, _ meter: ProgressMeter?) {
        guard let meter, report.files.count > 1 else { return }
        StandardError.write(RunSummaryRenderer().render(report, seconds: meter.elapsed))
    }

    /// Prints the report as asked: standard output, or standard error when standard output carries data
    /// (`--output -`). Errors for files also go to standard error when the report is not text for people.
    func emit(_ report: Report, _ settings: WorkflowSettings, toStandardError: Bool = false, defaultFormat: ReportFormat = .text) throws {
        let format = settings.format ?? defaultFormat
        // Under --quiet nothing is shown, so nothing is rendered (a batch's text report was 1.4% of its CPU).
        if !quiet {
            let text = try format.renderer(verbose: verbose, colour: color.enabled(fd: toStandardError ? 2 : 1)).render(report)
            if toStandardError {
                StandardError.write(text)
            } else {
                try writingReport { () throws(MetascrubError) in try StandardStreams.writeOutput(Array(text.utf8)) }
            }
        }
        if quiet || format == .json || format == .sarif {
            for file in report.files where file.status == .error {
                StandardError.write("metascrub: \(file.path): \(file.error?.message ?? "failed")\n")
            }
        }
        if let path = self.report {
            let name = path.lowercased()
            let format: ReportFormat = name.hasSuffix(".json") ? .json : name.hasSuffix(".sarif") ? .sarif : .text
            let text = try format.renderer(verbose: true).render(report)
            try writingReport { () throws(MetascrubError) in try ReportFile.write(text, to: path) }
        }
    }

    /// A report that cannot be written is its own failure (exit 4), said with the reason: CI must not read a
    /// missing or empty report as a pass, nor mistake it for findings.
    private func writingReport(_ body: () throws(MetascrubError) -> Void) throws {
        do {
            try body()
        } catch {
            StandardError.write("metascrub: cannot write the report: \(error.description)\n")
            throw ExitCode(ExitStatus.reportFailed.rawValue)
        }
    }

    /// `--report` may not name an input: writing it would destroy a file the run was only asked to read.
    func checkReportPath(against inputs: [String]) throws {
        guard let report else { return }
        if inputs.contains(where: { ExistingDestination.sameFile($0, report) }) {
            try runUsage { () throws -> Void in throw CLIError.usage("--report \(report) is one of the inputs; give another file") }
        }
    }
}

enum ColorChoice: String, ExpressibleByArgument, CaseIterable {
    case auto, always, never

    /// auto: only on a terminal, and not when NO_COLOR is set to anything (no-color.org); the flag overrides it.
    func enabled(fd: Int32) -> Bool {
        switch self {
        case .always: return true
        case .never: return false
        case .auto:
            let environment = ProcessInfo.processInfo.environment
            if let noColor = environment["NO_COLOR"], !noColor.isEmpty { return false }
            if environment["TERM"] == "dumb" { return false }
            return isatty(fd) == 1
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
    } catch let error as MetascrubError {
        StandardError.write("metascrub: \(error.description)\n")
        throw ExitCode(ExitStatus.usage.rawValue)
    }
}
