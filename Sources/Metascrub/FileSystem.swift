// SPDX-License-Identifier: GPL-3.0-or-later
import CPlatform
import MetascrubCore
import MetascrubFormats

#if canImport(Glibc)
import Glibc
#endif

/// Every file-system call the pipeline makes to read an input and to write an output goes through here, so tests
/// can inject failures (ENOSPC, EIO, a failed rename or fsync; see `FaultInjectingFileSystem`). The input walk
/// (stat, opendir, realpath) still calls the system directly: it never writes, and its failures are reported
/// per entry.
public protocol FileSystem: Sendable {
    /// Makes finished files and their folder entries durable (one syncfs per file system): once per batch, for new outputs, which are
    /// not fsynced one by one as they are written (see AtomicWriter).
    func flush(_ paths: [String]) throws
    /// Opens an input read-only.
    func openForReading(_ path: String) throws -> FileByteSource
    /// Opens a temp file this run has just written, for verification (mapped, see `FileByteSource`).
    func openOwnTemporary(_ path: String) throws -> FileByteSource
    /// Creates a new, empty temp file (mode 0600) in `directory`; returns its descriptor and path.
    func createTemporary(in directory: String, hint: String) throws -> (fd: Int32, path: String)
    /// Writes all of `bytes` at the descriptor's position (retrying short writes and EINTR).
    func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws
    /// Copies up to `count` bytes in the kernel (copy_file_range); returns how many were copied, 0 when the
    /// kernel cannot copy between these files (the caller falls back to read and write).
    func copyRange(from input: Int32, offset: inout Int64, to fd: Int32, count: Int, path: String) throws -> Int
    func fsync(_ fd: Int32, path: String) throws
    /// Starts write-back of a finished file without waiting for it (a batch's fsyncs then share one journal
    /// commit, see `CommitGroup`). Advisory: failures show up in the fsync that follows.
    func startWriteback(_ fd: Int32)
    /// Set by `Engine` for a batch: replacing writes are committed together (see `CommitGroup`, `AtomicWriter`).
    var commitGroup: CommitGroup? { get }
    func close(_ fd: Int32)
    func rename(_ from: String, to: String) throws
    func unlink(_ path: String)
    /// fsyncs a directory so a rename inside it survives a crash.
    func syncDirectory(_ path: String) throws
    func makeDirectories(_ path: String) throws
    /// Opens an existing file (a finished temp file) for changing its attributes.
    func openForAttributes(_ path: String) throws -> Int32
    func setMode(_ fd: Int32, mode: mode_t, path: String) throws
    /// Sets access and modification times (`--keep-mtime`).
    func setTimes(_ fd: Int32, access: timespec, modification: timespec, path: String) throws
    /// The names in a folder (without `.` and `..`), for finding stale temp files.
    func entries(of directory: String) throws -> [String]
    /// lstat(2): nil when the entry is gone.
    func linkStatus(_ path: String) -> stat?
}

extension FileSystem {
    // Defaults, so test doubles written before these calls existed still conform; they can override them.
    public func openForReading(_ path: String) throws -> FileByteSource { try FileByteSource(path: path) }
    public func openOwnTemporary(_ path: String) throws -> FileByteSource { try FileByteSource(path: path, mapOwnFile: true) }

    public func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws {
        var done = 0
        while done < bytes.count {
            let n = Glibc.write(fd, bytes.baseAddress! + done, bytes.count - done)
            if n < 0 {
                if errno == EINTR { continue }
                throw MetascrubError.io(operation: "write", path: path, errno: errno)
            }
            done += n
        }
    }

    public func copyRange(from input: Int32, offset: inout Int64, to fd: Int32, count: Int, path: String) throws -> Int {
        var inOffset = CLongLong(offset)
        while true {
            let n = ms_copy_file_range(input, &inOffset, fd, count)
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP { return 0 }
                throw MetascrubError.io(operation: "copy", path: path, errno: errno)
            }
            offset = Int64(inOffset)
            return n
        }
    }

    public func openForAttributes(_ path: String) throws -> Int32 {
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw MetascrubError.io(operation: "open", path: path, errno: errno) }
        return fd
    }

    public func setTimes(_ fd: Int32, access: timespec, modification: timespec, path: String) throws {
        var times = [access, modification]
        if futimens(fd, &times) != 0 { throw MetascrubError.io(operation: "set times of", path: path, errno: errno) }
    }

    public func entries(of directory: String) throws -> [String] {
        guard let dir = opendir(directory.isEmpty ? "." : directory) else {
            throw MetascrubError.io(operation: "open directory", path: directory, errno: errno)
        }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != ".", name != ".." { names.append(name) }
        }
        return names
    }

    public func linkStatus(_ path: String) -> stat? {
        var st = stat()
        return lstat(path, &st) == 0 ? st : nil
    }
}

public struct PosixFileSystem: FileSystem {
    /// The files are a server worker's own job: its input, written by the server before the worker started and
    /// left alone until it ends, is mapped rather than copied into memory (nobody can truncate it under the
    /// mapping); its outputs are read once and removed, so their write-back is never started (a thread and disk
    /// writes for files no crash needs to survive).
    public var privateJob: Bool

    public init(privateJob: Bool = false) { self.privateJob = privateJob }

    public func openForReading(_ path: String) throws -> FileByteSource {
        try FileByteSource(path: path, mapOwnFile: privateJob)
    }

    /// Temp files carry this prefix so a later run can recognise and remove those a killed run left. The full
    /// name is `.metascrub-<random>-<pid>-<target name>.tmp`: the PID tells a later run whether the writer is
    /// still alive (see `StaleTemporaries`).
    public static let temporaryPrefix = ".metascrub-"

    public func createTemporary(in directory: String, hint: String) throws -> (fd: Int32, path: String) {
        let base = String(hint.split(separator: "/").last ?? "out").prefix(40)
        for _ in 0..<16 {
            let path = "\(directory)/\(Self.temporaryPrefix)\(UInt64.random(in: 0...UInt64.max) & 0xFFFF_FFFF_FFFF)-\(getpid())-\(base).tmp"
            // Recorded as this run's, so an interrupted run removes it (see `RunTemporaries`).
            let fd = RunTemporaries.shared.create(path) { open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600) }
            if fd >= 0 { return (fd, path) }
            if errno != EEXIST { throw MetascrubError.io(operation: "create temporary file in", path: directory, errno: errno) }
        }
        throw MetascrubError.io(operation: "create temporary file in", path: directory, errno: EEXIST)
    }

    public func fsync(_ fd: Int32, path: String) throws {
        if Glibc.fsync(fd) != 0 { throw MetascrubError.io(operation: "fsync", path: path, errno: errno) }
    }

    public func startWriteback(_ fd: Int32) { if !privateJob { WritebackStarter.start(fd) } }

    public func close(_ fd: Int32) { _ = Glibc.close(fd) }

    public func rename(_ from: String, to: String) throws {
        if RunTemporaries.shared.rename(from, { Glibc.rename(from, to) }) != 0 { throw MetascrubError.io(operation: "rename to", path: to, errno: errno) }
    }

    public func unlink(_ path: String) { RunTemporaries.shared.remove(path) { _ = Glibc.unlink(path) } }

    public func flush(_ paths: [String]) throws {
        // One syncfs per file system instead of an fsync per file and folder: each fsync was a journal commit of
        // its own (a batch of 1,000 new files waited for 1,000+ commits), syncfs is one, like `cp` then `sync`.
        // It covers the new directory entries too, and reports write-back errors nobody has seen yet, as fsync does.
        var flushedDevices = Set<UInt64>()
        for folder in Set(paths.map { Paths.directory(of: $0) }).sorted() {
            let fd = open(folder.isEmpty ? "." : folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard fd >= 0 else { throw MetascrubError.io(operation: "open directory", path: folder, errno: errno) }
            defer { _ = Glibc.close(fd) }
            var info = stat()
            guard fstat(fd, &info) == 0 else { throw MetascrubError.io(operation: "stat", path: folder, errno: errno) }
            guard flushedDevices.insert(UInt64(info.st_dev)).inserted else { continue }
            if ms_syncfs(fd) != 0 { throw MetascrubError.io(operation: "syncfs", path: folder, errno: errno) }
        }
    }

    public func syncDirectory(_ path: String) throws {
        let fd = open(path.isEmpty ? "." : path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw MetascrubError.io(operation: "open directory", path: path, errno: errno) }
        defer { _ = Glibc.close(fd) }
        if Glibc.fsync(fd) != 0, errno != EINVAL { throw MetascrubError.io(operation: "fsync directory", path: path, errno: errno) }
    }

    public func makeDirectories(_ path: String) throws {
        var current = path.hasPrefix("/") ? "" : "."
        for part in path.split(separator: "/") {
            current += "/\(part)"
            if mkdir(current, 0o755) != 0, errno != EEXIST {
                throw MetascrubError.io(operation: "create directory", path: current, errno: errno)
            }
        }
    }

    public func setMode(_ fd: Int32, mode: mode_t, path: String) throws {
        if fchmod(fd, mode) != 0 { throw MetascrubError.io(operation: "chmod", path: path, errno: errno) }
    }
}

enum Paths {
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let dir = String(path[..<slash])
        return dir.isEmpty ? "/" : dir
    }

    static func basename(_ path: String) -> String {
        String(path.split(separator: "/", omittingEmptySubsequences: true).last ?? Substring(path))
    }

    static func join(_ a: String, _ b: String) -> String {
        if b.isEmpty { return a }
        return a.hasSuffix("/") ? a + b : a + "/" + b
    }

    /// The canonical absolute path (symlinks resolved), or nil when it does not resolve.
    static func real(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Whether canonical `path` is `root` or below it.
    static func isWithin(_ path: String, _ root: String) -> Bool {
        path == root || path.hasPrefix(root.hasSuffix("/") ? root : root + "/")
    }

    /// A path as given, without `./` prefixes and doubled slashes (how include/exclude see named files).
    static func normalised(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: true).filter { $0 != "." }.joined(separator: "/")
    }
}


extension FileSystem {
    /// File systems that do not write (test doubles) have nothing to flush.
    public func flush(_ paths: [String]) throws {}
    public func startWriteback(_ fd: Int32) {}
    public var commitGroup: CommitGroup? { nil }
}
