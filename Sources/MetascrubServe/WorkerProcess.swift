// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import CSandbox
import MetascrubSandbox
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// How a worker process ended.
enum WorkerOutcome: Sendable, Equatable {
    case exited(Int32)
    /// Killed by a signal: a crash, an rlimit (SIGXCPU, SIGXFSZ, SIGKILL) or someone's `kill -9`.
    case signalled(Int32)
    case timedOut
    case failedToStart(String)
}

/// Starts `metascrub worker` for one file and waits for it, killing it (SIGKILL) at the deadline or when the
/// request is cancelled. The worker confines itself before it opens the file (see `Sandbox`).
struct WorkerLauncher: Sendable {
    var executable: String
    var sandbox: Bool
    var cpuSeconds: Int
    var refuseDamaged: Bool
    /// Who workers run as when the server is root (nobody): never the server's own uid, never with capabilities.
    var workerUser: (uid: UInt32, gid: UInt32)?
    /// Forks warm workers when present and ready; nil or gone: every worker is exec'd.
    var forkServer: ForkServerClient?

    /// `report`: the client reads the full report (else only the summary is written).
    func job(_ mode: WorkerJob.Mode, _ job: SpoolJob, policy: String, inputBytes: Int64, report: Bool) -> WorkerJob {
        var limits: SandboxLimits?
        if sandbox {
            limits = SandboxLimits.forFile(ofSize: inputBytes, cpuSeconds: cpuSeconds)
            limits?.user = workerUser
        }
        // Digests only for a report the client reads: hashing both sides costs more than the rest of a JPEG clean.
        return WorkerJob(mode: mode, input: job.input, output: mode == .clean ? job.output : nil,
                         report: report ? job.report : nil, summary: job.summary, policy: policy,
                         refuseDamaged: refuseDamaged, digests: report, limits: limits)
    }

    func run(_ job: WorkerJob, timeout: Duration) async -> WorkerOutcome {
        if let forkServer, let outcome = await forkServer.run(job, timeout: timeout) { return outcome }
        return await exec(job.commandLine, timeout: timeout)
    }

    /// One `metascrub worker` process, exec'd for this file.
    func exec(_ arguments: [String], timeout: Duration) async -> WorkerOutcome {
        let watch = WorkerWatch()
        return await withTaskCancellationHandler {
            var pid: pid_t = 0
            let argv = ([executable] + arguments).map { strdup($0) } + [nil]
            defer { argv.forEach { free($0) } }
            let rc = metascrub_spawn(executable, argv, &pid)
            guard rc == 0 else { return .failedToStart(String(cString: strerror(rc))) }
            let child = pid
            watch.started(timeout: timeout) { _ = Glibc.kill(child, SIGKILL) }
            if Task.isCancelled { watch.kill() }
            // A blocking wait on a pool thread: at most --workers of these at once.
            let ended: WorkerOutcome = await withCheckedContinuation { continuation in
                DispatchQueue.global().async {
                    var exited: Int32 = 0
                    var code: Int32 = 0
                    let failed = metascrub_wait_exit(child, &exited, &code)
                    watch.ended()
                    metascrub_reap(child)
                    continuation.resume(returning: failed != 0 ? .failedToStart("waitid: \(failed)")
                                        : exited != 0 ? .exited(code) : .signalled(code))
                }
            }
            return watch.timedOut ? .timedOut : ended
        } onCancel: {
            watch.kill()
        }
    }
}

/// How to kill a running worker, its deadline, and whether the deadline killed it.
final class WorkerWatch: Sendable {
    private struct State {
        var killer: (@Sendable () -> Void)?
        var done = false
        var timedOut = false
        var timer: Task<Void, Never>?
    }
    private let state = Mutex(State())

    var timedOut: Bool { state.withLock { $0.timedOut } }

    func started(timeout: Duration, killer: @escaping @Sendable () -> Void) {
        let timer = Task { [self] in
            do { try await Task.sleep(for: timeout) } catch { return }
            kill(timedOut: true)
        }
        let finished = state.withLock { s in
            s.killer = killer
            s.timer = timer
            return s.done
        }
        if finished { timer.cancel() }
    }

    func ended() {
        let timer = state.withLock { s in
            s.done = true
            return s.timer
        }
        timer?.cancel()
    }

    /// SIGKILL, unless it already ended (its PID may be reused by then).
    func kill(timedOut: Bool = false) {
        state.withLock { s in
            guard let killer = s.killer, !s.done else { return }
            if timedOut { s.timedOut = true }
            killer()
        }
    }
}
