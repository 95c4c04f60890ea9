// SPDX-License-Identifier: GPL-3.0-or-later
import CSandbox
import MetascrubCore

/// Resource limits for a process about to parse an untrusted file. nil: leave that limit alone.
public struct SandboxLimits: Sendable, Equatable {
    public var cpuSeconds: Int?
    public var addressSpaceBytes: Int64?
    public var fileSizeBytes: Int64?

    public init(cpuSeconds: Int? = nil, addressSpaceBytes: Int64? = nil, fileSizeBytes: Int64? = nil) {
        self.cpuSeconds = cpuSeconds
        self.addressSpaceBytes = addressSpaceBytes
        self.fileSizeBytes = fileSizeBytes
    }

    /// For one file of `inputBytes`: the input is mapped, not read, so the address space grows with it; the
    /// output is at most a little larger than the input (a baked orientation, a faststart move).
    public static func forFile(ofSize inputBytes: Int64, cpuSeconds: Int) -> SandboxLimits {
        SandboxLimits(cpuSeconds: cpuSeconds, addressSpaceBytes: (4 << 30) + 2 * inputBytes,
                      fileSizeBytes: 2 * inputBytes + (64 << 20))
    }
}

/// What took effect when a process confined itself.
public struct SandboxState: Sendable, Equatable, CustomStringConvertible {
    public var resourceLimits: Bool
    public var networkNamespace: Bool
    public var seccomp: Bool
    public var noNewPrivileges: Bool

    public var description: String {
        var parts = [String]()
        if resourceLimits { parts.append("rlimits") }
        if networkNamespace { parts.append("netns") }
        if seccomp { parts.append("seccomp") }
        if noNewPrivileges { parts.append("no-new-privs") }
        return parts.isEmpty ? "none" : parts.joined(separator: ",")
    }
}

public enum Sandbox {
    /// Confines the calling process for good: no core dumps, the limits, a private network namespace where the
    /// kernel allows it, and a seccomp filter refusing network sockets, exec and ptrace. Throws when a resource
    /// limit cannot be set: a worker must not parse anything unconfined.
    public static func enter(_ limits: SandboxLimits) throws(MetascrubError) -> SandboxState {
        var c = metascrub_sandbox_limits(
            cpu_seconds: Int64(limits.cpuSeconds ?? 0),
            address_space_bytes: limits.addressSpaceBytes ?? 0,
            file_size_bytes: limits.fileSizeBytes ?? 0)
        let bits = metascrub_sandbox_enter(&c)
        guard bits >= 0 else { throw .io(operation: "setrlimit", path: "-", errno: -bits) }
        return SandboxState(
            resourceLimits: bits & METASCRUB_SANDBOX_RLIMITS != 0,
            networkNamespace: bits & METASCRUB_SANDBOX_NETNS != 0,
            seccomp: bits & METASCRUB_SANDBOX_SECCOMP != 0,
            noNewPrivileges: bits & METASCRUB_SANDBOX_NO_NEW_PRIVS != 0)
    }
}
