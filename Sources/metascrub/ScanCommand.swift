// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Metascrub
import MetascrubCore
import MetascrubFormats

struct ScanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "List every metadata item and what the policy would do with it. Never writes.",
        discussion: """
            `-` reads standard input. With --staged, checks the blobs staged in git (what the next commit \
            holds) and prints one line per offending file. Exit status: 0 nothing the policy removes, \
            1 findings, 2 usage or policy error, 3 a file could not be read or checked, 4 the report could not be written.
            """
    )

    @Argument(help: ArgumentHelp("Files or folders (folders are walked recursively); - for standard input.", valueName: "path"),
              completion: .file())
    var paths: [String] = []

    @Flag(name: .long, help: "Check the files staged in git (the index, not the working tree) instead of paths.")
    var staged = false

    @OptionGroup var options: ReportOptions

    func validate() throws {
        if staged, !paths.isEmpty { throw ValidationError("--staged takes no paths: it checks what git has staged") }
        if !staged, paths.isEmpty { throw ValidationError("Missing expected argument '<path> ...' (or --staged)") }
        if paths.contains("-"), paths.count != 1 { throw ValidationError("- (standard input) must be the only input") }
    }

    func run() async throws {
        let settings = try options.settings()
        let engine = try options.engine(settings)
        try options.checkReportPath(against: paths)
        if staged {
            let report = try runUsage {
                try StagedWorkflow(engine: engine, filter: settings.filter, directory: FileManager.default.currentDirectoryPath).scan()
            }
            try runUsage { try options.emit(report, settings, defaultFormat: .brief) }
            let status = ExitStatus.forScan(report)
            if status == .findings, !options.quiet {
                StandardError.write("metascrub: staged files carry metadata the \(report.policy.name) policy removes; run `metascrub clean --staged`, or commit with --no-verify to skip this check\n")
            }
            throw exitStatusCode(status)
        }
        let report: Report
        if paths == ["-"] {
            let bytes = try runUsage { try StandardStreams.readInput() }
            report = engine.makeReport(.scan, [FileProcessor(options: engine.options).scan(source: MemoryByteSource(bytes), path: "-")])
        } else {
            let meter = options.progressMeter()
            report = await engine.scan(try options.expand(paths, settings), progress: meter)
            try runUsage { try options.emit(report, settings) }
            options.summarise(report, meter)
            throw exitStatusCode(ExitStatus.forScan(report))
        }
        try runUsage { try options.emit(report, settings) }
        throw exitStatusCode(ExitStatus.forScan(report))
    }
}
