// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

#if canImport(Glibc)
import Glibc
#endif

/// Runs scans and cleans over many files with a bounded pool of tasks. Reports come back in input order,
/// whatever the scheduling.
public struct Engine: Sendable {
    public var options: ProcessingOptions
    public var jobs: Int

    public init(options: ProcessingOptions, jobs: Int = Engine.defaultJobs) {
        self.options = options
        self.jobs = max(1, jobs)
    }

    public static var defaultJobs: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

    public func scan(_ paths: [String]) async -> Report {
        let processor = FileProcessor(options: options)
        let files = InputWalker.expand(paths)
        let reports = await run(files) { processor.scan($0) }
        return report(.scan, reports)
    }

    public func clean(_ paths: [String], output: OutputMode) async -> Report {
        let processor = FileProcessor(options: options)
        let files = InputWalker.expand(paths)
        let reports = await run(files) { processor.clean($0, output: output) }
        return report(.clean, reports)
    }

    private func report(_ command: Report.Command, _ files: [FileReport]) -> Report {
        Report(tool: Report.Tool(version: MetascrubVersion.current), command: command,
               policy: Report.PolicyInfo(name: options.policy.name, digest: "sha256:" + options.policy.digest), files: files)
    }

    /// At most `jobs` files in flight; each file's work is synchronous I/O and parsing.
    private func run(_ files: [InputFile], _ work: @escaping @Sendable (InputFile) -> FileReport) async -> [FileReport] {
        if jobs == 1 || files.count <= 1 { return files.map(work) }
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
                if next < files.count { submit() }
            }
        }
        return results.map { $0! }
    }
}

/// The exit status contract other tools rely on.
public enum ExitStatus: Int32, Sendable {
    case success = 0
    /// scan: findings; clean --exit-code: a file changed.
    case findings = 1
    case usage = 2
    /// At least one file could not be read or cleaned.
    case failure = 3

    public static func forScan(_ report: Report) -> ExitStatus {
        if report.files.contains(where: { $0.status == .error }) { return .failure }
        if report.files.contains(where: { $0.status == .findings }) { return .findings }
        return .success
    }

    public static func forClean(_ report: Report, exitCodeOnChange: Bool) -> ExitStatus {
        if report.files.contains(where: { $0.status == .error }) { return .failure }
        if exitCodeOnChange, report.files.contains(where: { $0.status == .cleaned }) { return .findings }
        return .success
    }
}
