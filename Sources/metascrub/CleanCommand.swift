// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Metascrub
import MetascrubCore
import MetascrubFormats
import MetascrubSandbox

extension ConversionTarget: ExpressibleByArgument {}

struct CleanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clean",
        abstract: "Write copies without the metadata the policy removes; verify each before it replaces anything.",
        discussion: """
            Exactly one of --output, --output-dir, --in-place or --staged. A file that cannot be cleaned is \
            left as it was, nothing is written for it, and the run exits 3; the other files are still done. \
            `clean - --output -` is a filter from standard input to standard output (the report then goes to \
            standard error).
            """
    )

    @Argument(help: ArgumentHelp("Files or folders (folders are walked recursively); - for standard input.", valueName: "path"),
              completion: .file())
    var paths: [String] = []

    @Option(name: [.short, .long], help: ArgumentHelp("Write the cleaned file here (one input only; - for standard output).", valueName: "file"),
            completion: .file())
    var output: String?

    @Option(name: .long, help: ArgumentHelp("Write cleaned files under this folder, mirroring the inputs; other files are copied unchanged.", valueName: "dir"),
            completion: .directory)
    var outputDir: String?

    @Flag(name: .long, help: "Replace the inputs (atomically, after verification).")
    var inPlace = false

    @Flag(name: .long, help: "Clean the files staged in git in the working tree and stage them again.")
    var staged = false

    @Flag(name: .long, help: "Replace files that already exist at the output paths. Without it such a file is refused (exit 3) unless it already holds exactly this input's output.")
    var overwrite = false

    @Flag(name: .long, help: "Exit 1 when any file was changed (for hooks).")
    var exitCode = false

    @Flag(name: .long, inversion: .prefixedNo, help: "Give written files the original's modification time.")
    var keepMtime: Bool?

    @Flag(name: .long, inversion: .prefixedNo, help: "Copy (or leave) media that cannot be cleaned, such as camera raws, unchanged with a warning instead of failing.")
    var allowUncleaned: Bool?

    @Flag(name: .long, help: "Copy (or, in place, leave) documents metascrub does not read but that may carry metadata (JPEG 2000, SVG, PDF, office documents, EPUB) unchanged with a warning, instead of leaving them out and exiting 3.")
    var copyUnsupported = false

    @Flag(name: .long, help: "MP4/MOV: put the movie box before the sample data, so playback can start while downloading.")
    var faststart = false

    @Option(name: .long, help: ArgumentHelp("Convert HEIC/HEIF/AVIF, JPEG XL and TIFF to jpeg or png while cleaning (a re-encode, verified by PSNR against the original's render; --output-dir outputs get the new extension).", valueName: "format"))
    var convert: ConversionTarget?

    @Option(name: .long, help: ArgumentHelp("JPEG quality for --convert jpeg (1-100; default 92).", valueName: "n"))
    var quality: Int?

    @Flag(name: .long, help: "Confine this process before reading any file: no core dumps, no network (seccomp; a network namespace where allowed), no exec (as `metascrub serve` does for its workers).")
    var sandbox = false

    @OptionGroup var options: ReportOptions

    func validate() throws {
        if sandbox, staged { throw ValidationError("--sandbox cannot be combined with --staged (git runs as a child process)") }
        let modes = [output != nil, outputDir != nil, inPlace, staged].filter { $0 }.count
        guard modes == 1 else {
            throw ValidationError("give exactly one of --output FILE, --output-dir DIR, --in-place or --staged")
        }
        if staged, !paths.isEmpty { throw ValidationError("--staged takes no paths: it cleans what git has staged") }
        if !staged, paths.isEmpty { throw ValidationError("Missing expected argument '<path> ...'") }
        if output != nil, paths.count != 1 {
            throw ValidationError("--output takes exactly one input file; use --output-dir for several")
        }
        if paths.contains("-"), output == nil { throw ValidationError("standard input (-) needs --output FILE or --output -") }
        if output == "-", paths != ["-"], paths.count != 1 { throw ValidationError("--output - takes one input") }
        if convert != nil, inPlace || staged || output == "-" || paths == ["-"] {
            throw ValidationError("--convert writes a file of another format: use --output FILE or --output-dir DIR")
        }
        if overwrite, inPlace || staged { throw ValidationError("--overwrite applies to --output and --output-dir") }
        if let quality, !(1...100).contains(quality) { throw ValidationError("--quality must be between 1 and 100") }
        if quality != nil, convert == nil { throw ValidationError("--quality applies to --convert jpeg") }
    }

    func run() async throws {
        let settings = try options.settings(WorkflowSettings(keepMtime: keepMtime, allowUncleaned: allowUncleaned))
        if sandbox { _ = try runUsage { () throws(MetascrubError) in try Sandbox.enter(SandboxLimits()) } }
        var engine = try options.engine(settings, layout: LayoutOptions(faststart: faststart))
        engine.options.conversion = ConversionOptions(target: convert, quality: quality)
        engine.options.overwrite = overwrite // a library caller's default is to replace; the command line's is not
        engine.options.copyUnsupported = copyUnsupported
        try options.checkReportPath(against: paths)
        try refuseOutputOntoInput()
        // Ctrl-C or a kill: this run's temp files are removed before it exits, with a line saying what was done.
        InterruptHandler.install()
        if staged {
            let meter = options.progressMeter()
            let report = try await stagedClean(engine, settings, meter)
            try runUsage { try options.emit(report, settings, defaultFormat: .brief) }
            options.summarise(report, meter)
            throw exitStatusCode(ExitStatus.forClean(report, exitCodeOnChange: exitCode))
        }
        if paths == ["-"] || output == "-" {
            throw try stream(engine, settings)
        }
        let mode: OutputMode
        if let output {
            mode = .file(output)
        } else if let outputDir {
            mode = .directory(outputDir)
        } else {
            mode = .inPlace
        }
        // Cleaning `.` into `./public-clean` must not walk into its own output on the next run.
        let files = try options.expand(paths, settings, skipFolders: outputDir.map { [$0] } ?? [])
        if case .file = mode, files.count != 1 {
            _ = try runUsage { () throws -> Int in throw CLIError.usage("--output takes exactly one input file; use --output-dir for a folder") }
        }
        let meter = options.progressMeter()
        let report = await engine.clean(files, output: mode, progress: meter)
        try runUsage { try options.emit(report, settings) }
        options.summarise(report, meter)
        throw exitStatusCode(ExitStatus.forClean(report, exitCodeOnChange: exitCode))
    }

    /// `--output` naming the input, or `--output-dir` naming an input folder, would silently be an in-place
    /// clean: the user asked for a copy, so it is a usage error that points at --in-place.
    private func refuseOutputOntoInput() throws {
        if let output, output != "-", let input = paths.first, input != "-", ExistingDestination.sameFile(input, output) {
            try runUsage { () throws -> Void in throw CLIError.usage("--output \(output) is the input itself; use --in-place to replace it") }
        }
        if let outputDir, let folder = paths.first(where: { ExistingDestination.sameFile($0, outputDir) }) {
            try runUsage { () throws -> Void in
                throw CLIError.usage("--output-dir \(outputDir) is the input folder \(folder) itself; use --in-place to replace its files")
            }
        }
    }

    private func stagedClean(_ engine: Engine, _ settings: WorkflowSettings, _ meter: ProgressMeter?) async throws -> Report {
        let workflow = try runUsage {
            try StagedWorkflow(engine: engine, filter: settings.filter, directory: FileManager.default.currentDirectoryPath)
        }
        do throws(MetascrubError) {
            return try await workflow.clean(progress: meter)
        } catch {
            StandardError.write("metascrub: \(error.description)\n")
            throw ExitCode(ExitStatus.usage.rawValue)
        }
    }

    /// `clean - --output -` and its halves: the cleaned bytes are written only after verification.
    private func stream(_ engine: Engine, _ settings: WorkflowSettings) throws -> ExitCode {
        let file = try runUsage { () throws(MetascrubError) in
            try FileProcessor(options: engine.options).cleanStream(paths[0], to: output)
        }
        let report = engine.makeReport(.clean, [file])
        try runUsage { try options.emit(report, settings, toStandardError: output == "-") }
        return exitStatusCode(ExitStatus.forClean(report, exitCodeOnChange: exitCode))
    }
}
