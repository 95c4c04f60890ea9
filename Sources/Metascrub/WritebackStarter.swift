// SPDX-License-Identifier: GPL-3.0-or-later
import CPlatform
import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Starts the write-back of finished data on a thread of its own (issue 25, round 3). `sync_file_range` blocks
/// while the disk's queue is full, so started from the copying thread it paced a large copy at the disk's speed and
/// the verification began only once the disk had caught up; from here the copy and the verification run at memory
/// speed while the disk writes. Durability is not this type's business: the fsyncs and the closing syncfs still
/// wait for every byte (`CommitGroup`, `Engine.flushNewOutputs`).
///
/// Each request holds a duplicate of the descriptor (the writer closes its own as soon as it is done), and at most
/// `backlog` requests wait: beyond that, or when the descriptors in use come near the process's limit (a batch's
/// commit group holds up to 64), the caller starts its write-back itself, so this never takes a descriptor a file
/// of the batch would need.
enum WritebackStarter {
    static let backlog = 16
    private static let queue = DispatchQueue(label: "metascrub.writeback")
    private static let waiting = Mutex(0)
    /// Descriptors are numbered lowest first, so a descriptor's number is about how many are open.
    private static let roomyBelow: Int32 = {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        return Int32(clamping: min(UInt64(limit.rlim_cur), UInt64(Int32.max)) / 2)
    }()

    static func start(_ fd: Int32) {
        let admitted = fd < roomyBelow && waiting.withLock { count in
            guard count < backlog else { return false }
            count += 1
            return true
        }
        let copy = admitted ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1
        guard copy >= 0 else {
            if admitted { waiting.withLock { $0 -= 1 } }
            _ = ms_start_writeback(fd)
            return
        }
        queue.async {
            _ = ms_start_writeback(copy)
            _ = close(copy)
            waiting.withLock { $0 -= 1 }
        }
    }
}
