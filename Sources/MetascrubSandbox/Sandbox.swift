// SPDX-License-Identifier: GPL-3.0-or-later
import CSandbox
import MetascrubCore

/// Resource limits and confinement for a process about to parse an untrusted file. nil: leave that alone.
public struct SandboxLimits: Sendable, Equatable {
    public var cpuSeconds: Int?
    public var addressSpaceBytes: Int64?
    public var fileSizeBytes: Int64?
    /// RLIMIT_NOFILE: a worker holds its input, output, report and a temp file, plus what the libraries open.
    public var openFiles: Int?
    /// RLIMIT_NPROC, as threads beyond those its uid already runs (seccomp allows no new process at all).
    public var extraTasks: Int?
    /// Become this uid and gid (with every capability dropped) before anything else: for a server running as root.
    public var user: (uid: UInt32, gid: UInt32)?
    /// Landlock: read only these (files or folders, with what is below them)…
    public var readable: [String]?
    /// …and create, write and remove files only in these folders.
    public var writable: [String]?

    public init(cpuSeconds: Int? = nil, addressSpaceBytes: Int64? = nil, fileSizeBytes: Int64? = nil,
                openFiles: Int? = nil, extraTasks: Int? = nil, user: (uid: UInt32, gid: UInt32)? = nil,
                readable: [String]? = nil, writable: [String]? = nil) {
        self.cpuSeconds = cpuSeconds
        self.addressSpaceBytes = addressSpaceBytes
        self.fileSizeBytes = fileSizeBytes
        self.openFiles = openFiles
        self.extraTasks = extraTasks
        self.user = user
        self.readable = readable
        self.writable = writable
    }

    public static func == (a: SandboxLimits, b: SandboxLimits) -> Bool {
        a.cpuSeconds == b.cpuSeconds && a.addressSpaceBytes == b.addressSpaceBytes && a.fileSizeBytes == b.fileSizeBytes
            && a.openFiles == b.openFiles && a.extraTasks == b.extraTasks && a.user?.uid == b.user?.uid
            && a.user?.gid == b.user?.gid && a.readable == b.readable && a.writable == b.writable
    }

    /// For one file of `inputBytes`: the input is mapped, not read, so the address space grows with it; the
    /// output is at most a little larger than the input (a baked orientation, a faststart move).
    public static func forFile(ofSize inputBytes: Int64, cpuSeconds: Int) -> SandboxLimits {
        SandboxLimits(cpuSeconds: cpuSeconds, addressSpaceBytes: (4 << 30) + 2 * inputBytes,
                      fileSizeBytes: 2 * inputBytes + (64 << 20), openFiles: 64, extraTasks: 32)
    }

    /// What any worker reads besides its input: shared libraries (FFmpeg and libheif load codecs lazily), the
    /// dynamic linker's cache, time zones. Never /etc as a whole, /proc, /home, the spool or a token file.
    public static let systemReadable = [
        "/usr/lib", "/usr/lib64", "/lib", "/lib64", "/usr/local/lib", "/opt/swift/usr/lib", "/etc/ld.so.cache",
        "/usr/share/zoneinfo", "/dev/null",
    ]
}

/// What took effect when a process confined itself.
public struct SandboxState: Sendable, Equatable, CustomStringConvertible {
    public var resourceLimits: Bool
    public var networkNamespace: Bool
    public var seccomp: Bool
    public var noNewPrivileges: Bool
    public var landlock: Bool
    public var separateUser: Bool

    public var description: String {
        var parts = [String]()
        if resourceLimits { parts.append("rlimits") }
        if networkNamespace { parts.append("netns") }
        if separateUser { parts.append("user") }
        if landlock { parts.append("landlock") }
        if seccomp { parts.append("seccomp") }
        if noNewPrivileges { parts.append("no-new-privs") }
        return parts.isEmpty ? "none" : parts.joined(separator: ",")
    }
}

public enum Sandbox {
    /// Landlock ABI of the running kernel (0: none).
    public static var landlockABI: Int { Int(metascrub_sandbox_landlock_abi()) }

    /// Confines the calling process for good: no core dumps, the limits, a private network namespace where the
    /// kernel allows it, the uid change, Landlock when paths are given, and the seccomp allow-list. Throws when a
    /// limit, the uid change or Landlock cannot be set: a worker must not parse anything unconfined.
    public static func enter(_ limits: SandboxLimits) throws(MetascrubError) -> SandboxState {
        let readable = (limits.readable ?? []).joined(separator: "\n")
        let writable = (limits.writable ?? []).joined(separator: "\n")
        let bits = readable.withCString { readablePointer in
            writable.withCString { writablePointer in
                var c = metascrub_sandbox_limits(
                    cpu_seconds: Int64(limits.cpuSeconds ?? 0),
                    address_space_bytes: limits.addressSpaceBytes ?? 0,
                    file_size_bytes: limits.fileSizeBytes ?? 0,
                    open_files: Int64(limits.openFiles ?? 0),
                    extra_tasks: Int64(limits.extraTasks ?? 0),
                    uid: limits.user.map { Int64($0.uid) } ?? -1,
                    gid: limits.user.map { Int64($0.gid) } ?? -1,
                    landlock: limits.readable != nil || limits.writable != nil ? 1 : 0,
                    readable: readablePointer, writable: writablePointer)
                return metascrub_sandbox_enter(&c)
            }
        }
        guard bits >= 0 else { throw .io(operation: "sandbox", path: "-", errno: -bits) }
        return SandboxState(
            resourceLimits: bits & METASCRUB_SANDBOX_RLIMITS != 0,
            networkNamespace: bits & METASCRUB_SANDBOX_NETNS != 0,
            seccomp: bits & METASCRUB_SANDBOX_SECCOMP != 0,
            noNewPrivileges: bits & METASCRUB_SANDBOX_NO_NEW_PRIVS != 0,
            landlock: bits & METASCRUB_SANDBOX_LANDLOCK != 0,
            separateUser: bits & METASCRUB_SANDBOX_USER != 0)
    }
}
