// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import CSandbox
import Foundation
import Metascrub
import MetascrubCore
import MetascrubSandbox

/// `metascrub worker --fork-server` (issue 33 item 6): started once by `metascrub serve`, it loads the binary and
/// its libraries, parses the shipped policies and warms itself up on files of its own, then forks one child per
/// file, ahead of it: a spare waits for the next job while the current one runs. The child runs the job an exec'd
/// worker would get (as JSON rather than a command line) through the same `WorkerJob.run`, so it confines itself
/// the same way before it opens the file; only the exec, the dynamic linking and the cold start are gone. The parent
/// stays single-threaded and unconfined, and never opens an upload.
enum ForkServer {
    /// What every child inherits from the parent's warm-up.
    final class Warm {
        let policies: [String: Policy]
        /// A job as the server sends one (a clean with limits, in a folder that does not exist), for spares to decode.
        let sampleJob: Data
        init(policies: [String: Policy]) {
            self.policies = policies
            let folder = "/nonexistent/job"
            var limits = SandboxLimits.forFile(ofSize: 1 << 20, cpuSeconds: 120)
            limits.user = (65534, 65534)
            let job = WorkerJob(mode: .clean, input: folder + "/input", output: folder + "/output",
                                report: folder + "/report.json", summary: folder + "/summary.json", policy: "strict",
                                digests: false, limits: limits)
            sampleJob = (try? JSONEncoder().encode(job)) ?? Data()
        }
    }

    static func serve(warmUpIn folder: String) throws(ExitCode) {
        bindEveryLibraryNow()
        // Like the server: /proc/<fork server>/mem closed to same-uid processes; children inherit it until they exec.
        _ = metascrub_make_undumpable()
        // The parent talks to the server over pipes only: an empty network namespace entered once here is shared by
        // every child, which then skips a namespace of its own (the costliest step of a child's confinement).
        // Without CAP_SYS_ADMIN this fails and each child tries (and, equally, fails) itself.
        _ = metascrub_sandbox_enter_network_namespace()
        var policies: [String: Policy] = [:]
        for name in PolicyCatalog.names { policies[name] = try? RunSetup.policy(name) }
        // Every child starts from this process's memory: after a few cleans of files made here, the Swift runtime's
        // type and conformance caches, Foundation's singletons and the lazily loaded libraries are already there,
        // and a child pays for its own file only.
        WorkerWarmUp.run(in: folder, policies: Array(policies.keys)) { json in
            json.withUnsafeBytes { decode($0, policies: policies, warmUp: true)?.run() ?? 2 }
        }
        // Once here rather than in every child (one credential commit per capability): children of a root server
        // that leave uid 0 find the bounding set empty. Without CAP_SETPCAP there is nothing to drop.
        if getuid() == 0 { _ = metascrub_bounding_set_clear() }
        // Children inherit the code mapped (on huge pages) instead of faulting it in; left as it is when the kernel
        // has no huge page to give.
        _ = metascrub_text_on_huge_pages()
        // Compiled here once; a child that cannot load it refuses its job (seccomp is not optional for a worker).
        _ = metascrub_seccomp_compile()
        let warm = Unmanaged.passRetained(Warm(policies: policies))
        var runner = metascrub_zygote_runner(run: runJob, warm: warmDecoder, context: warm.toOpaque())
        let status = metascrub_zygote_serve(0, 1, &runner)
        warm.release()
        if status != 0 { throw ExitCode(3) }
    }

    /// Started again with every library's calls bound at load (once, before anything else): a library linked for
    /// lazy binding (libstdc++) otherwise has its calls looked up on their first use in each child, which writes
    /// to, and so copies, the pages holding their addresses. The same file is started (by descriptor), so an
    /// upgrade in place cannot put another version behind a running server.
    private static func bindEveryLibraryNow() {
        let error = metascrub_reexec_bound_now(CommandLine.unsafeArgv, "metascrub")
        if error != 0 {
            FileHandle.standardError.write(Data("metascrub worker: fork server lazily bound (errno \(error))\n".utf8))
        }
    }

    /// In the child: the job is a `WorkerJob` as JSON, from the server; -1 when it is not one.
    private static let runJob: @convention(c) (UnsafePointer<CChar>?, UnsafeMutableRawPointer?) -> Int32 = {
        text, context in
        guard let text, let context else { return -1 }
        let warm = Unmanaged<Warm>.fromOpaque(context).takeUnretainedValue()
        let json = UnsafeRawBufferPointer(start: text, count: strlen(text))
        return decode(json, policies: warm.policies, warmUp: false)?.run() ?? -1
    }

    /// In a spare waiting for its job: a job shaped like the server's decoded and dropped, so that the decode's first
    /// page faults in this copy of the memory are behind it when its own job comes.
    private static let warmDecoder: @convention(c) (UnsafeMutableRawPointer?) -> Void = { context in
        guard let context else { return }
        _ = try? WorkerJob.decode(json: Unmanaged<Warm>.fromOpaque(context).takeUnretainedValue().sampleJob)
    }

    private static func decode(_ json: UnsafeRawBufferPointer, policies: [String: Policy], warmUp: Bool) -> WorkerJob? {
        guard var job = try? WorkerJob.decode(json: Data(json)) else {
            FileHandle.standardError.write(Data("metascrub worker: the fork server got a malformed job\n".utf8))
            return nil
        }
        job.preparsedPolicy = policies[job.policy]
        job.testHooks = !warmUp
        return job
    }
}
