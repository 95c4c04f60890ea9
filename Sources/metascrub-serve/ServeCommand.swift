// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Metascrub
import MetascrubCore
import MetascrubSandbox
import MetascrubServe

/// The root command of the metascrub-serve binary, which `metascrub serve` execs (see `ServeLauncher`); started
/// from `main.swift`.
struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "metascrub serve",
        abstract: "Run the HTTP scrubbing service: each uploaded file is cleaned and verified in a sandboxed worker process.",
        discussion: """
            Endpoints: POST /v1/clean, /v1/scan, /v1/check; GET /healthz, /readyz, /v1/formats, /v1/policies \
            (docs/serve.md). Settings come from the command line, then the `serve:` section of .metascrub.yaml. \
            SIGTERM drains: no new connections, requests in flight finish.
            """
    )

    @Option(name: .long, help: ArgumentHelp("Address to listen on (default 127.0.0.1:8480).", valueName: "host:port"))
    var listen: String?

    @Option(name: .long, help: ArgumentHelp("Serve Prometheus metrics at /metrics on this separate address.", valueName: "host:port"))
    var metrics: String?

    @Option(name: .long, help: ArgumentHelp("Default policy: a shipped name or a YAML file (clients may pick another shipped name with ?policy=).", valueName: "name|file"))
    var policy: String?

    @Option(name: .long, help: ArgumentHelp("Largest upload accepted, enforced while reading (default 512M).", valueName: "size"))
    var maxBytes: String?

    @Option(name: .long, help: ArgumentHelp("Worker processes at once (default: the number of cores).", valueName: "n"))
    var workers: Int?

    @Option(name: .long, help: ArgumentHelp("Requests admitted beyond the running workers; past that 429 with Retry-After (default 16).", valueName: "n"))
    var queue: Int?

    @Option(name: .long, help: ArgumentHelp("Uploads spooled at once, apart from the worker slots (default 4 × (workers + queue), at least 64).", valueName: "n"))
    var uploadSlots: Int?

    @Option(name: .long, help: ArgumentHelp("Average upload rate a client must keep after the grace period, or 408 (default 16K per second).", valueName: "size"))
    var minUploadRate: String?

    @Option(name: .long, help: ArgumentHelp("Seconds before the minimum upload rate applies (default 10).", valueName: "seconds"))
    var uploadGrace: Int?

    @Option(name: .long, help: ArgumentHelp("On SIGTERM, seconds /readyz answers 503 before the listener closes (default 5).", valueName: "seconds"))
    var drainGrace: Int?

    @Option(name: .long, help: ArgumentHelp("Seconds a worker may take per file (also its CPU-time limit; default 120).", valueName: "seconds"))
    var timeout: Int?

    @Option(name: .long, help: ArgumentHelp("Require `Authorization: Bearer TOKEN` on /v1/*, the token read from this file.", valueName: "file"))
    var tokenFile: String?

    @Option(name: .long, help: ArgumentHelp("Folder for the private spool of uploads (default $TMPDIR or /tmp).", valueName: "dir"))
    var spool: String?

    @Option(name: .long, help: ArgumentHelp(
        "Folder (a tmpfs) for small uploads of known length (default /dev/shm when it is a tmpfs; as root, a tmpfs of "
            + "the server's own mounted over it).", valueName: "dir"))
    var memorySpool: String?

    @Option(name: .long, help: ArgumentHelp(
        "Most the memory spool holds at once, each upload counted twice (default 64M; 0: off).", valueName: "size"))
    var memorySpoolBytes: String?

    @Flag(name: .long, help: "Refuse damaged files instead of cleaning their metadata and copying the damaged part unchanged.")
    var refuseDamaged = false

    @Flag(name: .long, help: .hidden)
    var noSandbox = false

    @Flag(name: .long,
          help: "Exec a worker per file instead of forking it from a warm fork server (slower; same sandbox).")
    var noForkServer = false

    @Option(name: .long, help: ArgumentHelp("Read settings from this file instead of the nearest .metascrub.yaml.", valueName: "file"))
    var config: String?

    @Flag(name: .long, help: "Ignore .metascrub.yaml files.")
    var noConfig = false

    // Enter a worker's sandbox with these limits, try a network socket and an exec, print the outcome as JSON:
    // what this kernel and container allow (tests and operators).
    @Flag(name: .long, help: .hidden) var probeSandbox = false
    @Option(name: .long, help: .hidden) var probeCpuSeconds: Int?
    @Option(name: .long, help: .hidden) var probeAddressSpace: Int64?
    @Option(name: .long, help: .hidden) var probeFileSize: Int64?

    /// The command line and, unless it asks for the sandbox probe, the server's settings, read once and
    /// synchronously: `main` acts on them before any thread starts. Help exits 0; usage errors exit 2, as for
    /// `metascrub` (ArgumentParser's default is 64).
    static func prepare() -> (command: ServeCommand, settings: ServeConfiguration?) {
        do {
            let command = try parse()
            let settings = command.probeSandbox
                ? nil : try runUsage { () throws(MetascrubError) in try command.settings() }
            return (command, settings)
        } catch {
            fail(error)
        }
    }

    /// Runs what `prepare` read: the server, or the sandbox probe when there are no settings.
    func start(settings: ServeConfiguration?) async {
        do {
            try await run(settings: settings)
        } catch {
            Self.fail(error)
        }
    }

    private static func fail(_ error: any Error) -> Never {
        if exitCode(for: error) == .validationFailure {
            FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
            Self.exit(withError: ExitCode(ExitStatus.usage.rawValue))
        }
        Self.exit(withError: error)
    }

    private func run(settings: ServeConfiguration?) async throws {
        guard let settings else {
            let limits = SandboxLimits(cpuSeconds: probeCpuSeconds, addressSpaceBytes: probeAddressSpace,
                                       fileSizeBytes: probeFileSize)
            print(try runUsage { () throws(MetascrubError) in try SandboxProbe.run(limits) })
            return
        }
        try await ServeServer.run(settings)
    }

    /// The server's settings: the configuration file's, then the command line's.
    func settings() throws(MetascrubError) -> ServeConfiguration {
        var settings = ServeConfiguration()
        if !noConfig {
            var path = config
            if path == nil { path = try WorkflowConfig.discover(from: FileManager.default.currentDirectoryPath)?.path }
            if let path { settings = try ServeConfigFile.apply(path: path, to: settings) }
        }
        if let listen {
            guard let address = HostPort(parsing: listen) else { throw .usage("--listen must be HOST:PORT") }
            settings.listen = address
        }
        if let metrics {
            guard let address = HostPort(parsing: metrics) else { throw .usage("--metrics must be HOST:PORT") }
            settings.metrics = address
        }
        if let policy { settings.policy = policy }
        if let bytes = try Self.size(maxBytes, "--max-bytes", example: "512M") { settings.maxBytes = bytes }
        if let workers { settings.workers = workers }
        if let queue { settings.queue = queue }
        if let timeout { settings.timeoutSeconds = timeout }
        if let uploadSlots { settings.uploadSlots = uploadSlots }
        if let rate = try Self.size(minUploadRate, "--min-upload-rate", example: "16K") {
            settings.minUploadRate = rate
        }
        if let uploadGrace { settings.uploadGraceSeconds = uploadGrace }
        if let drainGrace { settings.drainGraceSeconds = drainGrace }
        if let tokenFile { settings.token = try ServeConfiguration.readToken(tokenFile) }
        if let spool { settings.spoolParent = spool }
        if let memorySpool { settings.memorySpoolParent = memorySpool }
        if let bytes = try Self.size(memorySpoolBytes, "--memory-spool-bytes", example: "64M") {
            settings.memorySpoolBytes = bytes
        }
        if refuseDamaged { settings.refuseDamaged = true }
        if noSandbox { settings.sandbox = false }
        if noForkServer { settings.forkServer = false }
        return try settings.validated()
    }

    /// A size option's bytes (nil when not given); a usage error when it is not a size.
    private static func size(_ text: String?, _ option: String, example: String) throws(MetascrubError) -> Int64? {
        guard let text else { return nil }
        guard let bytes = ServeConfiguration.parseBytes(text) else {
            throw .usage("\(option) must be a size such as \(example)")
        }
        return bytes
    }
}
