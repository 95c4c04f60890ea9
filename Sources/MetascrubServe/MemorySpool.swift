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

    /// The memory spool the configuration asks for, or nil: turned off, or the folder not there (the default
    /// `/dev/shm` only when it is a tmpfs). The budget is at most half the file system, which others share.
    static func open(parent: String?, bytes: Int64, workerOwner: (uid: UInt32, gid: UInt32)?,
                     explicit: Bool) -> MemorySpool? {
        guard let parent, bytes > 0 else { return nil }
        var size = metascrub_tmpfs_bytes(parent)
        if size == 0, explicit {
            var fs = statvfs()
            guard statvfs(parent, &fs) == 0 else { return nil }
            size = Int64(fs.f_blocks) * Int64(fs.f_frsize)
        }
        guard size > 0 else { return nil }
        let half = size / 2
        guard let directory = try? SpoolDirectory(parent: parent, workerOwner: workerOwner) else { return nil }
        return MemorySpool(directory: directory, budget: min(bytes, half))
    }

    /// A job folder here for an upload of `uploadBytes`, or nil when the length is not known or the budget is
    /// taken (the caller uses the disk spool).
    func makeJob(uploadBytes: Int64?) throws(ServeError) -> SpoolJob? {
        guard let uploadBytes, uploadBytes >= 0, uploadBytes <= budget / 2 else { return nil }
        let cost = 2 * uploadBytes
        let taken = held.withLock { held in
            guard held + cost <= budget else { return false }
            held += cost
            return true
        }
        guard taken else { return nil }
        let reservation = Reservation(cost, of: self)
        return try directory.makeJob(reservation: reservation)
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
