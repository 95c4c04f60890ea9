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
    private let held = Mutex<Int64>(0)

    private init(directory: SpoolDirectory, budget: Int64) {
        self.directory = directory
        self.budget = budget
    }

    /// The memory spool the configuration asks for, or nil: turned off, or the default `/dev/shm` not a tmpfs.
    /// The budget is at most half the file system, which others share. A folder the operator named that cannot be
    /// used is an error, not a silent fallback. Turned off, it still sweeps what dead servers left there.
    static func open(parent: String?, bytes: Int64, workerOwner: (uid: UInt32, gid: UInt32)?,
                     explicit: Bool) throws(MetascrubError) -> MemorySpool? {
        guard let parent else { return nil }
        guard bytes > 0 else {
            let home = "\(parent)/metascrub-\(geteuid())"
            if SpoolDirectory.isOwn(home) { SpoolDirectory.sweepDeadServers(in: home) }
            return nil
        }
        var size = metascrub_tmpfs_bytes(parent)
        if size == 0, explicit {
            var fs = statvfs()
            if statvfs(parent, &fs) == 0 { size = Int64(fs.f_blocks) * Int64(fs.f_frsize) }
        }
        guard size > 0 else {
            if explicit {
                throw .io(operation: "use as the memory spool", path: parent, errno: size < 0 ? Int32(-size) : ENOENT)
            }
            return nil
        }
        let directory: SpoolDirectory
        do {
            directory = try SpoolDirectory(parent: parent, workerOwner: workerOwner)
        } catch {
            if explicit { throw error }
            return nil
        }
        return MemorySpool(directory: directory, budget: min(bytes, size / 2))
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
        var fs = statvfs()
        guard statvfs(directory.path, &fs) == 0, Int64(fs.f_bavail) * Int64(fs.f_frsize) >= cost else { return nil }
        return try? directory.makeJob(reservation: reservation)
    }

    /// What the jobs here hold now, in budget bytes.
    var heldBytes: Int64 { held.withLock { $0 } }

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
