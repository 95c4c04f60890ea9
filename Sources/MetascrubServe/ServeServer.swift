// SPDX-License-Identifier: GPL-3.0-or-later
import CSandbox
import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import MetascrubCore
import NIOCore
import ServiceLifecycle

/// `metascrub serve`: the HTTP service, its metrics listener and SIGTERM draining. On SIGTERM or SIGINT the
/// service stops accepting connections, answers /readyz 503, finishes the requests in flight and exits.
public enum ServeServer {
    public static func run(_ config: ServeConfiguration) async throws {
        var logger = Logger(label: "metascrub.serve")
        logger.logLevel = .notice
        // Before any worker exists: a worker running as the same uid must not read or write this process's memory.
        let undumpable = metascrub_make_undumpable()
        guard undumpable == 0 else { throw MetascrubError.io(operation: "prctl", path: "-", errno: undumpable) }
        let spool = try SpoolDirectory(parent: config.spoolParent, workerOwner: ServeState.workerUser)
        defer { spool.remove() }
        let memorySpool = try MemorySpool.open(named: config.memorySpoolParent, bytes: config.memorySpoolBytes,
                                               workerOwner: ServeState.workerUser)
        defer { memorySpool?.directory.remove() }
        let state = ServeState(config: config, spool: spool, memorySpool: memorySpool, logger: logger)
        // A connection that sends nothing for longer than a worker may take is closed (slow or stalled uploads).
        let http1 = HTTP1Channel.Configuration(
            additionalChannelHandlers: [ReceiveBufferHandler(), ExpectContinueHandler(maxBytes: config.maxBytes),
                                        FileRegionWriter.Installer()],
            idleTimeout: .seconds(Int64(config.timeoutSeconds + 30)))
        let app = Application(
            router: ServeRoutes.router(state),
            server: .http1(configuration: http1),
            configuration: ApplicationConfiguration(address: .hostname(config.listen.host, port: config.listen.port), serverName: "metascrub"),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? config.listen.port
                let memory = memorySpool.map { "\($0.budget) bytes in \($0.directory.path)\($0.privateTmpfs)" } ?? "off"
                let line = "metascrub serve: listening on \(HostPort(host: config.listen.host, port: port)) "
                    + "(workers \(config.workers), queue \(config.queue), max \(config.maxBytes) bytes, "
                    + "memory spool \(memory), sandbox \(config.sandbox ? "on" : "off"))\n"
                FileHandle.standardError.write(Data(line.utf8))
            },
            logger: logger)
        var services = [ServiceGroupConfiguration.ServiceConfiguration(service: app, successTerminationBehavior: .gracefullyShutdownGroup)]
        if let address = config.metrics {
            let metricsApp = Application(
                router: ServeRoutes.metricsRouter(state),
                configuration: ApplicationConfiguration(address: .hostname(address.host, port: address.port), serverName: "metascrub-metrics"),
                logger: logger)
            services.append(.init(service: metricsApp, successTerminationBehavior: .ignore))
        }
        // Last in the list, so the first told of a graceful shutdown: readiness goes false before anything stops.
        services.append(.init(service: DrainService(state: state), successTerminationBehavior: .ignore))
        var group = ServiceGroupConfiguration(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        group.maximumGracefulShutdownDuration = .seconds(config.drainGraceSeconds + config.timeoutSeconds + 30)
        try await ServiceGroup(configuration: group).run()
    }
}

/// Marks the service not ready as soon as draining starts.
struct DrainService: Service {
    let state: ServeState

    /// Services shut down one at a time, last first: this one holds the listener open for the drain grace, with
    /// /readyz already 503, so load balancers stop sending before connections are refused.
    func run() async throws {
        try? await gracefulShutdown()
        state.ready = false
        state.logger.notice("draining: /readyz is 503; the listener closes in \(state.config.drainGraceSeconds) s")
        try? await Task.sleep(for: .seconds(state.config.drainGraceSeconds))
    }
}
