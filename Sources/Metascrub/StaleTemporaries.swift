// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Removes temp files a killed run left in the folders this run writes to, once per folder per run.
///
/// A file is stale only when all of these hold, so a live writer's temp file is never touched:
/// - its name is exactly ours: `.metascrub-<digits>-<pid>-<anything>.tmp` (nothing else is ever removed);
/// - it is a regular file (not a link, not a folder);
/// - the PID in its name is not this process and no process with that PID exists (`kill(pid, 0)` fails with
///   ESRCH; EPERM means it exists under another user, so the file is kept);
/// - it was last modified before this run started (a process that died cannot have written it later).
/// PIDs are local to a PID namespace: a writer in another container sharing the folder can look dead. Removing
/// its temp file then makes that run's rename fail with an error; its original is still untouched.
public final class StaleTemporaries: Sendable {
    private let started: timespec
    private let swept = Mutex(Set<String>())

    public init() {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        started = now
    }

    /// Sweeps `directory` unless this run already did; returns the names removed.
    @discardableResult
    public func sweep(_ directory: String, fileSystem fs: any FileSystem) -> [String] {
        let first = swept.withLock { $0.insert(directory).inserted }
        guard first, let names = try? fs.entries(of: directory) else { return [] }
        var removed: [String] = []
        for name in names where Self.writerPID(name) != nil {
            let path = Paths.join(directory, name)
            guard isStale(name: name, path: path, fs) else { continue }
            fs.unlink(path)
            if fs.linkStatus(path) == nil { removed.append(name) }
        }
        return removed.sorted()
    }

    private func isStale(name: String, path: String, _ fs: any FileSystem) -> Bool {
        guard let pid = Self.writerPID(name), pid != getpid() else { return false }
        guard let st = fs.linkStatus(path), st.st_mode & S_IFMT == S_IFREG else { return false }
        guard Self.before(st.st_mtim, started) else { return false }
        return kill(pid, 0) != 0 && errno == ESRCH
    }

    static func before(_ a: timespec, _ b: timespec) -> Bool {
        a.tv_sec < b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec <= b.tv_nsec)
    }

    /// The PID in a temp file name written by `PosixFileSystem.createTemporary`, or nil when the name is not one.
    static func writerPID(_ name: String) -> pid_t? {
        guard name.hasPrefix(PosixFileSystem.temporaryPrefix), name.hasSuffix(".tmp") else { return nil }
        let fields = name.dropFirst(PosixFileSystem.temporaryPrefix.count).split(separator: "-", maxSplits: 2, omittingEmptySubsequences: false)
        guard fields.count == 3, !fields[0].isEmpty, fields[0].allSatisfy(\.isASCIIDigit),
              !fields[1].isEmpty, fields[1].count <= 10, fields[1].allSatisfy(\.isASCIIDigit),
              let pid = Int32(fields[1]), pid > 0 else { return nil }
        return pid
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
