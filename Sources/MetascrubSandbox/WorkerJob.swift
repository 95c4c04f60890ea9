// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubCore

#if canImport(Glibc)
import Glibc
#endif

/// One file, in a process of its own (`metascrub worker`): confine the process, clean or scan the file, write the
/// CLI's JSON report to `report`. The server reads the report and streams the output; a crash, a limit or a
/// timeout here costs this file only.
public struct WorkerJob: Sendable {
    public enum Mode: String, Sendable, CaseIterable { case clean, scan }

    public var mode: Mode
    public var input: String
    /// clean: where the verified copy is written.
    public var output: String?
    /// Where the full JSON report goes; nil: none is written (a server's clean whose client did not ask for the
    /// report: the summary carries what its answer needs).
    public var report: String?
    /// Where the `WorkerSummary` goes (server workers); nil: only the report is written.
    public var summary: String?
    /// A shipped policy name or a policy file (the server's operator chose it, never the client).
    public var policy: String
    public var refuseDamaged: Bool
    /// SHA-256 of input and output in the report: hashing both sides costs more than the rest of a JPEG clean,
    /// so only when the client asked for the full report.
    public var digests: Bool
    public var limits: SandboxLimits?
    /// `policy`, already parsed by a fork server (shipped policies only: a policy file is read per job).
    public var preparsedPolicy: Policy?
    /// Whether the test hooks below are read: never in a fork server's warm-up, which runs unconfined.
    public var testHooks = true

    public init(mode: Mode, input: String, output: String?, report: String?, summary: String? = nil, policy: String,
                refuseDamaged: Bool = false, digests: Bool = true, limits: SandboxLimits?) {
        self.mode = mode
        self.input = input
        self.output = output
        self.report = report
        self.summary = summary
        self.policy = policy
        self.refuseDamaged = refuseDamaged
        self.digests = digests
        self.limits = limits
    }

    /// Test hook, read by the worker only: sleep this long before parsing, so tests can find a busy worker
    /// (to kill it, to fill the queue, to drain it). Never set in production.
    public static let stallVariable = "METASCRUB_WORKER_STALL_MS"

    /// Test hook, read by the worker only: `no-output` removes the cleaned file after the report is written and
    /// still exits 0, the fault the server must never answer with the upload. Never set in production.
    public static let faultVariable = "METASCRUB_WORKER_TEST_FAULT"

    /// One variable, without building the whole environment as a dictionary (a tenth of a forked child's start).
    static func testHook(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }

    /// The limits with Landlock's paths for this job: the system's libraries and the input to read; the job's
    /// folder (where the output and the report go) to write in.
    func confined(_ limits: SandboxLimits) -> SandboxLimits {
        var limits = limits
        let files = [report, output, summary].compactMap { $0 }
        let folders = Set(files.map { ($0 as NSString).deletingLastPathComponent })
            .map { $0.isEmpty ? "." : $0 }
        limits.readable = SandboxLimits.systemReadable + [input]
        limits.writable = folders.sorted()
        return limits
    }

    /// A plain write, not an atomic one: the server reads these only after the worker has ended, and a report cut
    /// short by a kill does not parse. (Foundation's atomic write costs a temp file, an fsync and a rename each.)
    static func write(_ data: Data, to path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw MetascrubError.io(operation: "create", path: path, errno: errno) }
        defer { close(fd) }
        try data.withUnsafeBytes { try PosixFileSystem().write(fd, $0, path: path) }
    }

    /// 0 when the report was written (whatever the file's status), 2 for a usage error, 3 otherwise.
    public func run() -> Int32 {
        do {
            guard report != nil || summary != nil else {
                throw MetascrubError.usage("worker needs a report or a summary")
            }
            // The policy first: a policy file is read before the sandbox could get in the way.
            var options = ProcessingOptions(policy: try preparsedPolicy ?? RunSetup.policy(policy))
            options.digests = digests
            options.fileSystem = PosixFileSystem(privateJob: true)
            if refuseDamaged { options.policy.damaged = .refuse }
            if let limits { _ = try Sandbox.enter(confined(limits)) }
            if testHooks, let stall = Self.testHook(Self.stallVariable).flatMap(Int.init), stall > 0 {
                usleep(UInt32(min(stall, 600_000)) * 1000)
            }
            let processor = FileProcessor(options: options)
            let file = InputFile(path: input, relative: "upload")
            let fileReport: FileReport
            switch mode {
            case .clean:
                guard let output else { throw MetascrubError.usage("worker clean needs --output") }
                fileReport = processor.clean(file, output: .file(output))
            case .scan:
                fileReport = processor.scan(file)
            }
            let full = Engine(options: options, jobs: 1).makeReport(mode == .clean ? .clean : .scan, [fileReport])
            // Written as the server's client reads it, so the server streams it and never holds or rewrites it.
            let folder = ((self.report ?? summary ?? input) as NSString).deletingLastPathComponent
            let report = summary == nil ? full : full.forClient(input: input, output: output, folder: folder)
            if let path = self.report { try Self.write(Data(try JSONReportRenderer().render(report).utf8), to: path) }
            if let summary { try Self.write((try? JSONEncoder().encode(WorkerSummary(report))) ?? Data(), to: summary) }
            if testHooks, Self.testHook(Self.faultVariable) == "no-output", let output {
                unlink(output)
            }
            return 0
        } catch let error as MetascrubError {
            FileHandle.standardError.write(Data("metascrub worker: \(error.description)\n".utf8))
            if case .usage = error { return 2 }
            if case .policy = error { return 2 }
            return 3
        } catch {
            FileHandle.standardError.write(Data("metascrub worker: \(error)\n".utf8))
            return 3
        }
    }
}
