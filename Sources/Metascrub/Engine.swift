// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubNative

#if canImport(Glibc)
import Glibc
#endif

/// Runs scans and cleans over many files with a bounded pool of tasks. Reports come back in input order,
/// whatever the scheduling.
public struct Engine: Sendable {
    /// The process-wide pixel budget follows the policy (the CLI's `--max-pixels` changes it here), so the
    /// single-file paths that use `FileProcessor` directly (standard input) obey it too.
    public var options: ProcessingOptions {
        didSet { PixelBudget.limit = options.policy.maxPixels }
    }
    public var jobs: Int

    public init(options: ProcessingOptions, jobs: Int = Engine.defaultJobs) {
        self.options = options
        self.jobs = max(1, jobs)
        PixelBudget.limit = options.policy.maxPixels
    }

    public static var defaultJobs: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

    public func scan(_ paths: [String], walk: WalkOptions = WalkOptions(), progress: ProgressMeter? = nil) async -> Report {
        await scan(InputWalker.expand(paths, options: walk), progress: progress)
    }

    public func scan(_ files: [InputFile], progress: ProgressMeter? = nil) async -> Report {
        PixelBudget.limit = options.policy.maxPixels
        let processor = FileProcessor(options: options)
        let reports = await run(files, progress: progress) { processor.scan($0) }
        return makeReport(.scan, reports)
    }

    public func clean(_ paths: [String], output: OutputMode, walk: WalkOptions = WalkOptions(), progress: ProgressMeter? = nil) async -> Report {
        var walk = walk
        // Cleaning `.` into `./public-clean` must not walk into its own output on the next run.
        if case .directory(let dir) = output { walk.skipFolders.append(dir) }
        return await clean(InputWalker.expand(paths, options: walk), output: output, progress: progress)
    }

    public func clean(_ files: [InputFile], output: OutputMode, progress: ProgressMeter? = nil) async -> Report {
        PixelBudget.limit = options.policy.maxPixels
        // A batch commits its replacing writes together, a chunk at a time (`CommitGroup`); one file keeps the
        // plain fsync, rename, folder fsync.
        var options = self.options
        let group = files.count > 1 ? CommitGroup() : nil
        if let group { options.fileSystem = GroupCommitFileSystem(base: options.fileSystem, group: group) }
        let processor = FileProcessor(options: options)
        let clashes = Self.outputClashes(files, output, renaming: options.conversion.target ?? options.policy.convert)
        let work: @Sendable (InputFile) -> FileReport = { file in
            if clashes.contains(file.path) {
                var report = FileReport(path: file.path, status: .error)
                report.error = ErrorInfo(.unsupported(format: "path", reason: "another input is written to the same output path (\(file.relative)); nothing was written"))
                return report
            }
            return processor.clean(file, output: output)
        }
        progress?.begin(files: files.count, bytes: files.reduce(0) { $0 + ($1.size ?? 0) })
        defer { progress?.finish() }
        var reports: [FileReport] = []
        reports.reserveCapacity(files.count)
        for chunk in Self.chunks(files) {
            let done = await execute(Array(files[chunk]), progress: progress, work)
            guard let group, !group.isEmpty else { reports += done; continue }
            reports += Self.settle(done, group.commit(self.options.fileSystem))
        }
        return makeReport(.clean, flushNewOutputs(reports, output))
    }

    /// Files per group commit: at most 64 files or 256 MB of input, so the temp files waiting for their commit
    /// never hold more than that much extra disk space (nor descriptors).
    public static func chunks(_ files: [InputFile], count: Int = 64, bytes: Int64 = 256 << 20) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        var start = 0, size: Int64 = 0
        for (index, file) in files.enumerated() {
            if index > start, index - start >= count || size + (file.size ?? 0) > bytes {
                ranges.append(start..<index)
                (start, size) = (index, 0)
            }
            size += file.size ?? 0
        }
        if start < files.count { ranges.append(start..<files.count) }
        return ranges
    }

    /// A chunk's reports after its commit: a file whose temp file could not be made durable or renamed is an
    /// error with its original untouched (no output); one whose folder could not be synced is an error that
    /// names the output it already is.
    static func settle(_ reports: [FileReport], _ failures: [String: (error: MetascrubError, replaced: Bool)]) -> [FileReport] {
        guard !failures.isEmpty else { return reports }
        return reports.map { report in
            guard let output = report.output, let failure = failures[output] else { return report }
            var failed = report
            failed.status = .error
            failed.error = ErrorInfo(failure.error)
            if !failure.replaced { failed.output = nil }
            return failed
        }
    }

    /// New outputs are not fsynced one by one as they are written (that made batches disk-bound); they are all
    /// fsynced at the end, before the run reports them cleaned. If that fails, none is reported as cleaned.
    private func flushNewOutputs(_ reports: [FileReport], _ output: OutputMode) -> [FileReport] {
        if case .inPlace = output { return reports }
        let written = reports.compactMap { $0.status == .cleaned || $0.status == .clean ? $0.output : nil }
        guard !written.isEmpty else { return reports }
        do {
            try options.fileSystem.flush(written)
            return reports
        } catch {
            let failure = (error as? MetascrubError) ?? .io(operation: "fsync", path: written[0], errno: EIO)
            return reports.map { report in
                guard report.output != nil else { return report }
                var failed = report
                failed.status = .error
                failed.error = ErrorInfo(failure)
                return failed
            }
        }
    }

    /// With several inputs mirrored into one folder, two files can map to one output path (`a/x.jpg` and
    /// `b/x.jpg` given as files). The later ones are refused rather than silently overwriting the first.
    /// With a conversion, `IMG_1.HEIC` is written as `IMG_1.jpg`, so it clashes with an `IMG_1.jpg` beside it:
    /// the later input is refused, never overwritten.
    static func outputClashes(_ files: [InputFile], _ output: OutputMode, renaming conversion: ConversionTarget? = nil) -> Set<String> {
        guard case .directory = output else { return [] }
        var seen = Set<String>()
        var clashes = Set<String>()
        for file in files where file.problem == nil && file.skip == nil {
            if !seen.insert(ConversionOptions.mirroredName(file.relative, conversion)).inserted { clashes.insert(file.path) }
        }
        return clashes
    }

    public func makeReport(_ command: Report.Command, _ files: [FileReport]) -> Report {
        Report(tool: Report.Tool(version: MetascrubVersion.current), command: command,
               policy: Report.PolicyInfo(name: options.policy.name, digest: "sha256:" + options.policy.digest), files: files)
    }

    /// At most `jobs` files in flight; each file's work is synchronous I/O and parsing. Results are kept in
    /// input order, so the report does not depend on scheduling.
    private func run(_ files: [InputFile], progress: ProgressMeter?, _ work: @escaping @Sendable (InputFile) -> FileReport) async -> [FileReport] {
        progress?.begin(files: files.count, bytes: files.reduce(0) { $0 + ($1.size ?? 0) })
        defer { progress?.finish() }
        return await execute(files, progress: progress, work)
    }

    private func execute(_ files: [InputFile], progress: ProgressMeter?, _ work: @escaping @Sendable (InputFile) -> FileReport) async -> [FileReport] {
        if jobs == 1 || files.count <= 1 {
            return files.map { file in
                let report = work(file)
                progress?.advance(bytes: file.size ?? 0)
                return report
            }
        }
        var results = [FileReport?](repeating: nil, count: files.count)
        await withTaskGroup(of: (Int, FileReport).self) { group in
            var next = 0
            func submit() {
                let index = next
                let file = files[index]
                group.addTask { (index, work(file)) }
                next += 1
            }
            while next < min(jobs, files.count) { submit() }
            while let (index, report) = await group.next() {
                results[index] = report
                progress?.advance(bytes: files[index].size ?? 0)
                if next < files.count { submit() }
            }
        }
        return results.map { $0! }
    }
}

/// A document that may carry metadata but was neither checked nor passed on knowingly (`UncheckedFormats`).
private func notChecked(_ file: FileReport) -> Bool {
    file.status == .skipped && file.reason?.hasPrefix(FileProcessor.notCheckedPrefix) == true
}

/// The exit status contract other tools rely on.
public enum ExitStatus: Int32, Sendable {
    case success = 0
    /// scan: findings; clean --exit-code: a file changed.
    case findings = 1
    case usage = 2
    /// At least one file could not be read or cleaned.
    case failure = 3
    /// The report could not be written (standard output or --report): a gate must not read an empty report as a pass.
    case reportFailed = 4

    public static func forScan(_ report: Report) -> ExitStatus {
        if report.files.contains(where: { $0.status == .error || notChecked($0) }) { return .failure }
        if report.files.contains(where: { $0.status == .findings }) { return .findings }
        return .success
    }

    public static func forClean(_ report: Report, exitCodeOnChange: Bool) -> ExitStatus {
        if report.files.contains(where: { $0.status == .error || notChecked($0) }) { return .failure }
        if exitCodeOnChange, report.files.contains(where: { $0.status == .cleaned }) { return .findings }
        return .success
    }
}
