// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Logging
import MetascrubCore
import Synchronization

/// What every request shares: the configuration, the admission limits, the spool, the worker launcher, the
/// metrics, and whether the service is ready (false once draining).
final class ServeState: Sendable {
    let config: ServeConfiguration
    let admission: Admission
    let spool: SpoolDirectory
    let memorySpool: MemorySpool?
    let launcher: WorkerLauncher
    let metrics = ServeMetrics()
    let logger: Logger
    private let readyFlag = Atomic<Bool>(true)

    init(config: ServeConfiguration, spool: SpoolDirectory, memorySpool: MemorySpool? = nil, logger: Logger) {
        self.config = config
        self.spool = spool
        self.memorySpool = memorySpool
        self.logger = logger
        admission = Admission(workers: config.workers, queue: config.queue, uploads: config.effectiveUploadSlots)
        let forks = config.forkServer && FileManager.default.isExecutableFile(atPath: config.workerExecutable)
        launcher = WorkerLauncher(executable: config.workerExecutable, sandbox: config.sandbox,
                                  cpuSeconds: config.timeoutSeconds, refuseDamaged: config.refuseDamaged,
                                  workerUser: config.sandbox ? Self.workerUser : nil,
                                  forkServer: forks ? ForkServerClient.start(executable: config.workerExecutable,
                                                                             warmUpIn: spool.path) : nil)
    }

    /// nobody, when the server runs as root: workers then never share the server's uid or its capabilities.
    static var workerUser: (uid: UInt32, gid: UInt32)? { geteuid() == 0 ? (65534, 65534) : nil }

    var ready: Bool {
        get { readyFlag.load(ordering: .acquiring) }
        set { readyFlag.store(newValue, ordering: .releasing) }
    }

    /// The policy for this request: the server's default, or a shipped policy the client names. A client never
    /// names a file.
    func policy(named name: Substring?) throws(ServeError) -> String {
        guard let name, !name.isEmpty else { return config.policy }
        guard PolicyCatalog.names.contains(String(name)) else { throw .badPolicy(String(name), shipped: PolicyCatalog.names) }
        return String(name)
    }
}
