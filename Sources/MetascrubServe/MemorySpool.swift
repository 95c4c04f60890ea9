// SPDX-License-Identifier: GPL-3.0-or-later
import CSandbox
import Foundation
import MetascrubCore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Small uploads spooled in memory: a second private spool folder on a tmpfs (`/dev/shm` unless told otherwise),
/// used while what it holds stays within a budget. A job there costs no block allocation and no inode search on
/// a disk: on an ext4 without a journal every file created scans the inodes deleted in the last seconds, which at a
/// few hundred requests a second was a tenth of the service's CPU. Uploads of unknown length, larger ones and any
/// past the budget go to the disk spool, which stays sized for the worst case.
final class MemorySpool: Sendable {
    let directory: SpoolDirectory
    /// Bytes it may hold at once: each job counts twice its upload (the upload and the cleaned copy).
    let budget: Int64
    /// Whether it lies on a tmpfs of this server's own, with large folios.
    let privateTmpfs: PrivateTmpfs
    private let held = Mutex<Int64>(0)

    private init(directory: SpoolDirectory, budget: Int64, privateTmpfs: PrivateTmpfs) {
        self.directory = directory
        self.budget = budget
        self.privateTmpfs = privateTmpfs
    }

    /// The memory spool in `named` (the operator's folder) or, when nil, in `/dev/shm` if that is a tmpfs; nil when
    /// turned off or the default is not there. The budget is at most half the file system, which others share. A
    /// folder the operator named that cannot be used is an error, not a silent fallback. Turned off, it still
    /// sweeps what dead servers left there. The default `/dev/shm` is replaced, for this server alone, by a tmpfs
    /// of its own when it may mount one (`PrivateTmpfs`): twice the budget, so that what a job writes beyond its
    /// estimate (a cleaned copy larger than its upload) fits, and what a compromised worker could fill in memory
    /// is bounded by the budget rather than by half the machine's memory.
    static func open(named: String?, bytes: Int64,
                     workerOwner: (uid: UInt32, gid: UInt32)?) throws(MetascrubError) -> MemorySpool? {
        let parent = named ?? "/dev/shm", explicit = named != nil
        // The host's folder, before a private tmpfs may hide it from this server.
        SpoolDirectory.sweepDeadServers(under: parent)
        guard bytes > 0 else { return nil }
        var tmpfs: Int32 = 0
        var size = metascrub_file_system_bytes(parent, &tmpfs)
        guard size > 0, explicit || tmpfs != 0 else {
            if explicit {
                throw .io(operation: "use as the memory spool", path: parent, errno: size < 0 ? Int32(-size) : ENOENT)
            }
            return nil
        }
        let privateSize = bytes >= size / 2 ? size : 2 * bytes
        let privateTmpfs = explicit ? .notTried : PrivateTmpfs.mount(over: parent, bytes: privateSize)
        if case .mounted = privateTmpfs { size = privateSize }
        let directory: SpoolDirectory
        do {
            directory = try SpoolDirectory(parent: parent, workerOwner: workerOwner)
        } catch {
            if explicit { throw error }
            return nil
        }
        return MemorySpool(directory: directory, budget: min(bytes, size / 2), privateTmpfs: privateTmpfs)
    }

    /// A job folder here for an upload of `uploadBytes`, or nil: the length is not known, the budget is taken, or
    /// the file system has no room or no folder for it (the caller uses the disk spool).
    func makeJob(uploadBytes: Int64?) -> SpoolJob? {
        guard let uploadBytes, uploadBytes >= 0, uploadBytes <= budget / 2 else { return nil }
        let cost = 2 * uploadBytes
        let taken = held.withLock { held in
            guard held + cost <= budget else { return false }
            held += cost
            return true
        }
        guard taken else { return nil }
        let reservation = Reservation(cost, of: self)
        // Others share the file system: without room for the upload and its copy now, the disk spool takes it.
        guard directory.freeBytes >= cost else { return nil }
        return try? directory.makeJob(reservation: reservation)
    }

    fileprivate func release(_ bytes: Int64) { held.withLock { $0 -= bytes } }

    /// A job's share of the budget, given back when the job (and so its folder) is gone.
    final class Reservation: Sendable {
        private let bytes: Int64
        private let spool: MemorySpool

        fileprivate init(_ bytes: Int64, of spool: MemorySpool) {
            self.bytes = bytes
            self.spool = spool
        }

        deinit { spool.release(bytes) }
    }
}

/// A tmpfs of the server's own over a folder, with large folios: seen by the server, its fork server and its
/// workers only (the mount namespace `main` entered), gone with the last of them (see `spool_mount.c` for why).
enum PrivateTmpfs: Sendable, CustomStringConvertible {
    /// The operator named the folder.
    case notTried
    case mounted
    /// Why not (no private mount namespace: not root, or no CAP_SYS_ADMIN; a kernel refusing `huge=`).
    case refused(errno: Int32)

    /// Mounts one of `bytes` over `path`, with `path`'s mode; the caller uses `path` as it is unless `.mounted`.
    static func mount(over path: String, bytes: Int64) -> PrivateTmpfs {
        var status = stat()
        guard stat(path, &status) == 0 else { return .refused(errno: errno) }
        let result = metascrub_mount_private_tmpfs(path, bytes, UInt32(status.st_mode & 0o7777))
        return result == 0 ? .mounted : .refused(errno: -result)
    }

    /// For the server's start line.
    var description: String {
        switch self {
        case .notTried: ""
        case .mounted: " on a private tmpfs"
        case .refused(let code): " (no private tmpfs: \(String(cString: strerror(code))))"
        }
    }
}
