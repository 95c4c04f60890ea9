// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// A job as the server hands it over: a JSON object to the fork server (decoded in the child, with caches the fork
/// server warmed), or the `metascrub worker` command line for an exec'd worker. Both carry the same fields; the
/// policy is sent by name only, never parsed here.
extension WorkerJob: Codable {
    enum CodingKeys: String, CodingKey {
        case mode, input, output, report, summary, policy, refuseDamaged, digests, limits
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(mode: try c.decode(Mode.self, forKey: .mode), input: try c.decode(String.self, forKey: .input),
                  output: try c.decodeIfPresent(String.self, forKey: .output),
                  report: try c.decodeIfPresent(String.self, forKey: .report),
                  summary: try c.decodeIfPresent(String.self, forKey: .summary),
                  policy: try c.decode(String.self, forKey: .policy),
                  refuseDamaged: try c.decode(Bool.self, forKey: .refuseDamaged),
                  digests: try c.decode(Bool.self, forKey: .digests),
                  limits: try c.decodeIfPresent(SandboxLimits.self, forKey: .limits))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(mode, forKey: .mode)
        try c.encode(input, forKey: .input)
        try c.encodeIfPresent(output, forKey: .output)
        try c.encodeIfPresent(report, forKey: .report)
        try c.encodeIfPresent(summary, forKey: .summary)
        try c.encode(policy, forKey: .policy)
        try c.encode(refuseDamaged, forKey: .refuseDamaged)
        try c.encode(digests, forKey: .digests)
        try c.encodeIfPresent(limits, forKey: .limits)
    }

    /// A job as a fork server receives it.
    public static func decode(json: Data) throws -> WorkerJob { try JSONDecoder().decode(WorkerJob.self, from: json) }

    /// The `metascrub worker` arguments (after the executable) that describe this job.
    public var commandLine: [String] {
        var args = ["worker", "--mode", mode.rawValue, "--input", input, "--policy", policy]
        if let report { args += ["--report", report] }
        if let summary { args += ["--summary", summary] }
        if let output { args += ["--output", output] }
        if digests { args.append("--digests") }
        if refuseDamaged { args.append("--refuse-damaged") }
        guard let limits else { return args + ["--no-sandbox"] }
        args += ["--cpu-seconds", String(limits.cpuSeconds ?? 0),
                 "--address-space", String(limits.addressSpaceBytes ?? 0),
                 "--file-size", String(limits.fileSizeBytes ?? 0),
                 "--open-files", String(limits.openFiles ?? 0),
                 "--extra-tasks", String(limits.extraTasks ?? 0)]
        if let user = limits.user { args += ["--uid", String(user.uid), "--gid", String(user.gid)] }
        return args
    }
}

extension WorkerJob.Mode: Codable {}

/// The limits a server sets; Landlock's paths are not sent (the worker derives them from its own job).
extension SandboxLimits: Codable {
    enum CodingKeys: String, CodingKey {
        case cpuSeconds, addressSpaceBytes, fileSizeBytes, openFiles, extraTasks, uid, gid
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let uid = try c.decodeIfPresent(UInt32.self, forKey: .uid)
        let gid = try c.decodeIfPresent(UInt32.self, forKey: .gid)
        self.init(cpuSeconds: try c.decodeIfPresent(Int.self, forKey: .cpuSeconds),
                  addressSpaceBytes: try c.decodeIfPresent(Int64.self, forKey: .addressSpaceBytes),
                  fileSizeBytes: try c.decodeIfPresent(Int64.self, forKey: .fileSizeBytes),
                  openFiles: try c.decodeIfPresent(Int.self, forKey: .openFiles),
                  extraTasks: try c.decodeIfPresent(Int.self, forKey: .extraTasks),
                  user: uid.map { ($0, gid ?? $0) })
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeIfPresent(cpuSeconds, forKey: .cpuSeconds)
        try c.encodeIfPresent(addressSpaceBytes, forKey: .addressSpaceBytes)
        try c.encodeIfPresent(fileSizeBytes, forKey: .fileSizeBytes)
        try c.encodeIfPresent(openFiles, forKey: .openFiles)
        try c.encodeIfPresent(extraTasks, forKey: .extraTasks)
        try c.encodeIfPresent(user?.uid, forKey: .uid)
        try c.encodeIfPresent(user?.gid, forKey: .gid)
    }
}
