// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubFormats
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Group commit for a batch that replaces files (`--in-place`, an `--output-dir` over earlier outputs; issue 25).
///
/// Each replacing write is finished, its write-back started, verified and given its attributes as before, but
/// instead of `fsync` + rename + folder `fsync` one file at a time (two journal commits per file, most of a
/// batch's wall time), its temp file waits here with its descriptor open. `commit()` then, for a chunk of files:
/// 1. fsyncs every temp file: their write-back was started as each was written, so the first fsync's journal
///    commit carries the block allocations of all of them and the others mostly find their data already on disk;
/// 2. renames each durable temp file over its target, in input order;
/// 3. fsyncs each folder once.
/// An original is therefore only ever replaced by a complete, verified, durable file; a kill at any point leaves
/// each target either the original or that file (temp files are swept by the next run, `StaleTemporaries`).
/// A failed fsync or rename fails that file only, with its temp file removed and its original untouched.
public final class CommitGroup: Sendable {
    struct Pending: Sendable {
        var fd: Int32
        var temp: String
        var target: String
        var directory: String
    }

    private let pending = Mutex<[Pending]>([])

    public init() {}

    func add(_ item: Pending) { pending.withLock { $0.append(item) } }

    var isEmpty: Bool { pending.withLock { $0.isEmpty } }

    /// Makes the waiting temp files durable, renames them over their targets and syncs their folders once.
    /// Returns the failure of each target that was not replaced (`replaced` false: the original is as it was),
    /// or whose folder could not be synced (`replaced` true: the target is the verified output).
    func commit(_ fs: any FileSystem) -> [String: (error: MetascrubError, replaced: Bool)] {
        let items = pending.withLock { items in
            defer { items.removeAll() }
            return items
        }
        var failed: [String: (error: MetascrubError, replaced: Bool)] = [:]
        var durable: [Pending] = []
        for item in items {
            do {
                try fs.fsync(item.fd, path: item.temp)
                durable.append(item)
            } catch {
                failed[item.target] = (Self.typed(error, "fsync", item.temp), false)
                fs.unlink(item.temp)
            }
            fs.close(item.fd)
        }
        var renamed: [String: [String]] = [:]
        for item in durable {
            do {
                try fs.rename(item.temp, to: item.target)
                renamed[item.directory, default: []].append(item.target)
            } catch {
                failed[item.target] = (Self.typed(error, "rename to", item.target), false)
                fs.unlink(item.temp)
            }
        }
        for (directory, targets) in renamed.sorted(by: { $0.key < $1.key }) {
            do {
                try fs.syncDirectory(directory)
            } catch {
                // Too late to undo: each target already is its complete, verified output (as in `AtomicWriter`).
                let code: Int32 = if case MetascrubError.io(_, _, let e) = error { e } else { 5 }
                for target in targets {
                    failed[target] = (.io(operation: "replaced the file with its verified output but could not fsync the folder",
                                          path: directory, errno: code), true)
                }
            }
        }
        return failed
    }

    private static func typed(_ error: any Error, _ operation: String, _ path: String) -> MetascrubError {
        (error as? MetascrubError) ?? .io(operation: operation, path: path, errno: 5)
    }
}

/// A file system whose replacing writes wait in `group` (everything else is `base`'s own).
struct GroupCommitFileSystem: FileSystem {
    var base: any FileSystem
    var group: CommitGroup

    var commitGroup: CommitGroup? { group }

    func flush(_ paths: [String]) throws { try base.flush(paths) }
    func openForReading(_ path: String) throws -> FileByteSource { try base.openForReading(path) }
    func openOwnTemporary(_ path: String) throws -> FileByteSource { try base.openOwnTemporary(path) }
    func createTemporary(in directory: String, hint: String) throws -> (fd: Int32, path: String) {
        try base.createTemporary(in: directory, hint: hint)
    }
    func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws { try base.write(fd, bytes, path: path) }
    func copyRange(from input: Int32, offset: inout Int64, to fd: Int32, count: Int, path: String) throws -> Int {
        try base.copyRange(from: input, offset: &offset, to: fd, count: count, path: path)
    }
    func fsync(_ fd: Int32, path: String) throws { try base.fsync(fd, path: path) }
    func startWriteback(_ fd: Int32) { base.startWriteback(fd) }
    func close(_ fd: Int32) { base.close(fd) }
    func rename(_ from: String, to: String) throws { try base.rename(from, to: to) }
    func unlink(_ path: String) { base.unlink(path) }
    func syncDirectory(_ path: String) throws { try base.syncDirectory(path) }
    func makeDirectories(_ path: String) throws { try base.makeDirectories(path) }
    func openForAttributes(_ path: String) throws -> Int32 { try base.openForAttributes(path) }
    func setMode(_ fd: Int32, mode: mode_t, path: String) throws { try base.setMode(fd, mode: mode, path: path) }
    func setTimes(_ fd: Int32, access: timespec, modification: timespec, path: String) throws {
        try base.setTimes(fd, access: access, modification: modification, path: path)
    }
    func entries(of directory: String) throws -> [String] { try base.entries(of: directory) }
    func linkStatus(_ path: String) -> stat? { base.linkStatus(path) }
}
