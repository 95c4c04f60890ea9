// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import MetascrubCore
import MetascrubSandbox

extension WorkerJob.Mode: ExpressibleByArgument {}

/// One file in a confined process, started by `metascrub serve` (not for people: hidden).
struct WorkerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "worker", abstract: "Clean or scan one file in a sandboxed process (used by serve).", shouldDisplay: false)

    @Option var mode: WorkerJob.Mode = .clean
    @Option var input: String?
    @Option var output: String?
    @Option var report: String?
    @Option var summary: String?
    @Option var policy: String?
    @Flag var refuseDamaged = false
    @Flag var digests = false
    @Option var cpuSeconds: Int?
    @Option var addressSpace: Int64?
    @Option var fileSize: Int64?
    @Option var openFiles: Int?
    @Option var extraTasks: Int?
    /// Set by a server running as root: the worker becomes this uid and gid, without capabilities.
    @Option var uid: UInt32?
    @Option var gid: UInt32?
    @Flag var noSandbox = false
    /// Serve jobs from standard input, one forked child each, instead of one file (see `ForkServer`).
    @Flag var forkServer = false
    /// Where the fork server makes its warm-up folder (the server's spool; default the temp folder).
    @Option var warmUpIn: String?

    func run() throws {
        if forkServer { return try ForkServer.serve(warmUpIn: warmUpIn ?? NSTemporaryDirectory()) }
        let status = try job(preparsed: [:]).run()
        if status != 0 { throw ExitCode(status) }
    }

    /// The job this command line describes; `preparsed`: shipped policies the fork server parsed once.
    func job(preparsed: [String: Policy]) throws(ValidationError) -> WorkerJob {
        let limits = noSandbox ? nil : SandboxLimits(
            cpuSeconds: cpuSeconds, addressSpaceBytes: addressSpace, fileSizeBytes: fileSize, openFiles: openFiles,
            extraTasks: extraTasks, user: uid.map { ($0, gid ?? $0) })
        guard let input, report != nil || summary != nil, let policy else {
            throw ValidationError("worker needs --input, --policy and --report or --summary")
        }
        var job = WorkerJob(mode: mode, input: input, output: output, report: report, summary: summary, policy: policy,
                            refuseDamaged: refuseDamaged, digests: digests, limits: limits)
        job.preparsedPolicy = preparsed[policy]
        return job
    }
}
