// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubCore

/// `HOST:PORT` (an IPv6 host in brackets: `[::1]:8480`).
public struct HostPort: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    public init?(parsing text: String) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
              (0...65535).contains(port) else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { return nil }
        self.init(host: host, port: port)
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// Everything `metascrub serve` is told: the command line over the `serve:` section of `.metascrub.yaml` over
/// these defaults.
public struct ServeConfiguration: Sendable, Equatable {
    public var listen = HostPort(host: "127.0.0.1", port: 8480)
    /// Prometheus text on its own listener, so the scrape port need not be public.
    public var metrics: HostPort?
    /// The default policy: a shipped name or a policy file. Clients may pick another shipped name, never a file.
    public var policy = BuiltinPolicies.defaultName
    public var maxBytes: Int64 = 512 << 20
    /// Worker processes running at once.
    public var workers = Engine.defaultJobs
    /// Requests admitted beyond the running workers (uploading or waiting); past that, 429.
    public var queue = 16
    /// Bodies spooled at once (nil: four times `workers + queue`, at least 64). Separate from the worker slots, so
    /// clients that upload slowly cannot keep others from being served.
    public var uploadSlots: Int?
    /// Bytes per second an upload must keep up on average once `uploadGraceSeconds` have passed; slower: 408.
    public var minUploadRate: Int64 = 16 << 10
    public var uploadGraceSeconds = 10
    /// After SIGTERM: seconds /readyz answers 503 while the listener still accepts (load balancers notice), before
    /// it closes and requests in flight are finished.
    public var drainGraceSeconds = 5
    /// Per request, from admission to the worker's exit.
    public var timeoutSeconds = 120
    /// Bearer token for /v1/*; nil: no authentication (bind to loopback or put a proxy in front).
    public var token: String?
    /// Parent of the private spool folder, sized for the worst case (`deploy/`: on disk).
    public var spoolParent = ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp"
    /// Parent of the memory spool for small uploads of known length (see `MemorySpool`), named by the operator: it
    /// must then be usable, or the server does not start. nil: `/dev/shm`, when it is a tmpfs.
    public var memorySpoolParent: String?
    /// The most the memory spool holds at once, each job counted as twice its upload; 0 turns it off.
    public var memorySpoolBytes: Int64 = 64 << 20
    /// The memory spool is on, in its default place (`/dev/shm`, or a tmpfs of the server's own over it).
    public var usesDefaultMemorySpool: Bool { memorySpoolParent == nil && memorySpoolBytes > 0 }
    /// The binary started for each file (`metascrub worker`).
    public var workerExecutable = ServeConfiguration.workerBesideServer
    /// Off only for debugging: workers then run unconfined.
    public var sandbox = true
    /// Fork each worker from a warm `metascrub worker --fork-server` (exec when off, or when it is not there).
    public var forkServer = true
    public var refuseDamaged = false

    public init() {}

    /// `metascrub`, installed beside metascrub-serve: workers run the binary that links no socket code.
    public static var workerBesideServer: String {
        let server = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return (server as NSString).deletingLastPathComponent + "/metascrub"
    }

    public func validated() throws(MetascrubError) -> ServeConfiguration {
        guard workers >= 1 else { throw .usage("--workers must be at least 1") }
        guard queue >= 0 else { throw .usage("--queue must be 0 or more") }
        guard maxBytes >= 1 else { throw .usage("--max-bytes must be at least 1") }
        guard timeoutSeconds >= 1 else { throw .usage("--timeout must be at least 1 second") }
        guard (uploadSlots ?? 1) >= 1 else { throw .usage("--upload-slots must be at least 1") }
        guard minUploadRate >= 0, uploadGraceSeconds >= 0, drainGraceSeconds >= 0 else {
            throw .usage("--min-upload-rate, --upload-grace and --drain-grace must be 0 or more")
        }
        _ = try RunSetup.policy(policy)
        return self
    }

    public var effectiveUploadSlots: Int { uploadSlots ?? max(64, 4 * (workers + queue)) }

    /// Reads a bearer token file: its first line, without surrounding white space.
    public static func readToken(_ path: String) throws(MetascrubError) -> String {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { throw .usage("cannot read token file \(path)") }
        let token = text.split(whereSeparator: \.isNewline).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        guard token.count >= 16 else { throw .usage("the token in \(path) is shorter than 16 characters") }
        return token
    }

    /// Sizes like `512M`, `2G`, `1048576`.
    public static func parseBytes(_ text: String) -> Int64? {
        let units: [Character: Int64] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40]
        var digits = text.uppercased()
        if digits.hasSuffix("IB") { digits.removeLast(2) } else if digits.hasSuffix("B") { digits.removeLast() }
        var scale: Int64 = 1
        if let last = digits.last, let unit = units[last] {
            scale = unit
            digits.removeLast()
        }
        guard let value = Int64(digits), value >= 0, value <= Int64.max / scale else { return nil }
        return value * scale
    }
}
