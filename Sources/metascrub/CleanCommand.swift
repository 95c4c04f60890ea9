// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Metascrub

struct CleanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clean",
        abstract: "Write copies without the metadata the policy removes; verify each before it replaces anything.",
        discussion: """
            Exactly one of --output, --output-dir or --in-place. A file that cannot be cleaned is left as it was, \
            nothing is written for it, and the run exits 3; the other files are still done.
            """
    )

    @Argument(help: "Files or folders (folders are walked recursively).")
    var paths: [String]

    @Option(name: [.short, .long], help: ArgumentHelp("Write the cleaned file here (one input only).", valueName: "file"))
    var output: String?

    @Option(name: .long, help: ArgumentHelp("Write cleaned files under this folder, mirroring the inputs.", valueName: "dir"))
    var outputDir: String?

    @Flag(name: .long, help: "Replace the inputs (atomically, after verification).")
    var inPlace = false

    @Flag(name: .long, help: "Exit 1 when any file was changed (for hooks).")
    var exitCode = false

    @OptionGroup var options: ReportOptions

    func validate() throws {
        let modes = [output != nil, outputDir != nil, inPlace].filter { $0 }.count
        guard modes == 1 else {
            throw ValidationError("give exactly one of --output FILE, --output-dir DIR or --in-place")
        }
        if output != nil, paths.count != 1 {
            throw ValidationError("--output takes exactly one input file; use --output-dir for several")
        }
    }

    func run() async throws {
        let engine = try runUsage { try options.engine() }
        let mode: OutputMode
        if let output {
            mode = .file(output)
        } else if let outputDir {
            mode = .directory(outputDir)
        } else {
            mode = .inPlace
        }
        if case .file = mode, InputWalker.expand(paths).count != 1 {
            _ = try runUsage { () throws -> Int in throw CLIError.usage("--output takes exactly one input file; use --output-dir for a folder") }
        }
        let report = await engine.clean(paths, output: mode)
        try runUsage { try options.emit(report) }
        throw exitStatusCode(ExitStatus.forClean(report, exitCodeOnChange: exitCode))
    }
}
