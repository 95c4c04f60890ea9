// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubFormats

#if canImport(Glibc)
import Glibc
#endif

/// Writes a file so that the target is either untouched or completely replaced: a temp file (mode 0600) in the
/// target's folder, written, fsynced (when it replaces a file), checked by the caller, renamed over the target,
/// and the folder fsynced; in a batch the last three steps are shared by a chunk of files (`CommitGroup`).
/// On any failure the temp file is removed and the target is as it was.
struct AtomicWriter {
    var fileSystem: any FileSystem

    /// `write` fills the temp file; `check` inspects the finished temp file (by path) before it replaces
    /// anything and throws to abandon it. Returns what `check` returned.
    func replace<T>(
        _ target: String, createFolders: Bool, write: (any OutputSink) throws -> Void, check: (String) throws -> T
    ) throws -> T {
        let fs = fileSystem
        let directory = Paths.directory(of: target)
        if createFolders { try fs.makeDirectories(directory) }
        // Replacing an existing file (in place, or an earlier output) is made durable first: fsync of the
        // temp file before the rename and of the folder after. A brand-new file has nothing to lose in a
        // crash, and a per-file fsync made a batch into a fresh output folder disk-bound (60% of its wall
        // time on the benchmark, docs/benchmarks.md); new files are fsynced together at the end of the batch
        // (Engine.flushNewOutputs), when write-back has mostly done the work, before the run reports them cleaned.
        let replacing = fs.linkStatus(target) != nil
        let (fd, temp) = try fs.createTemporary(in: directory, hint: Paths.basename(target))
        var committed = false
        defer { if !committed { fs.unlink(temp) } }
        // In a batch, a replacing write waits in the engine's commit group (fsyncs that share a journal commit,
        // renames, one fsync per folder: `CommitGroup`); its descriptor stays open until then.
        if replacing, let group = fs.commitGroup {
            let result: T
            do {
                let sink = FileSystemOutputSink(fileSystem: fs, fd: fd, path: temp)
                try write(sink)
                try sink.flush()
                fs.startWriteback(fd)
                result = try check(temp)
            } catch {
                fs.close(fd)
                throw error
            }
            group.add(.init(fd: fd, temp: temp, target: target, directory: directory))
            committed = true
            return result
        }
        do {
            let sink = FileSystemOutputSink(fileSystem: fs, fd: fd, path: temp)
            try write(sink)
            try sink.flush()
            if replacing {
                try fs.fsync(fd, path: temp)
            } else {
                // A new file is made durable by the batch's one syncfs at the end (`Engine.flushNewOutputs`); its
                // write-back starts now, so the disk writes while the next files are being cleaned instead of
                // all of them waiting for that syncfs (issue 25: the syncfs was a third of a JPEG batch's wall time).
                fs.startWriteback(fd)
            }
            fs.close(fd)
        } catch {
            fs.close(fd)
            throw error
        }
        let result = try check(temp)
        try fs.rename(temp, to: target)
        committed = true
        do {
            if replacing { try fs.syncDirectory(directory) }
        } catch MetascrubError.io(_, _, let code) {
            // Too late to undo: the target already is the complete, verified output, but a power loss now
            // could bring back the original. Said plainly rather than reported as "nothing was written".
            throw MetascrubError.io(operation: "replaced the file with its verified output but could not fsync the folder",
                                    path: directory, errno: code)
        }
        return result
    }
}
