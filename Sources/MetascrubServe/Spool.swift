// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Hummingbird
import MetascrubCore

#if canImport(Glibc)
import Glibc
#endif

/// The server's private spool folder (0700, its own name per process): every request gets a folder inside it
/// for the upload, the worker's output and its report. It sits in `metascrub-<euid>` inside the parent given, a
/// folder only this user can write in, so nobody else can plant a folder there for a server to sweep. Removed when
/// the server exits; a folder a killed server left is removed by the next one that starts: dead is a folder whose
/// lock (held by its server for its whole life) is free and whose PID is gone or is this process's own (a restarted
/// container's PID 1).
final class SpoolDirectory: Sendable {
    let path: String
    /// This user's folder of server folders; nil when someone else's is in the way (the folder is then made in
    /// the parent itself).
    let home: String?
    /// Who owns the job folders (the workers' uid and gid), when that is not the server.
    let workerOwner: (uid: UInt32, gid: UInt32)?
    /// The folder, opened and locked (flock) while this server lives.
    private let lock: Int32
    static let prefix = "metascrub-serve-"

    init(parent: String, workerOwner: (uid: UInt32, gid: UInt32)? = nil) throws(MetascrubError) {
        var made: String?
        var home: String?
        // Twice: another server's exit may remove an empty `home` between its creation here and the mkdtemp.
        for _ in 0..<2 where made == nil {
            // Someone else's `metascrub-<euid>` (planted in a shared /tmp) must not keep the server from starting:
            // its folder then goes in the parent itself, and nothing there is swept.
            home = try Self.home(in: parent, workersPass: workerOwner != nil)
            if let home { Self.sweepDeadServers(in: home) }
            let folder = home ?? parent
            var template = Array("\(folder)/\(Self.prefix)\(getpid())-XXXXXX".utf8CString)
            made = mkdtemp(&template).map { String(cString: $0) }
            if made == nil, errno != ENOENT { throw .io(operation: "mkdtemp", path: folder, errno: errno) }
        }
        guard let made else { throw .io(operation: "mkdtemp", path: home ?? parent, errno: ENOENT) }
        path = made
        self.home = home
        self.workerOwner = workerOwner
        lock = open(made, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard lock >= 0, flock(lock, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            if lock >= 0 { close(lock) }
            rmdir(made)
            throw .io(operation: "lock", path: made, errno: code)
        }
        // Workers of another uid must pass through to their own folder, never list this one.
        if workerOwner != nil, chmod(path, 0o711) != 0 { throw .io(operation: "chmod", path: path, errno: errno) }
    }

    deinit { close(lock) }

    /// `parent/metascrub-<euid>`, made if needed (0711 when workers of another uid pass through, else 0700); nil
    /// when what is there is not a folder of this user's that no one else can write in.
    static func home(in parent: String, workersPass: Bool) throws(MetascrubError) -> String? {
        let home = homePath(in: parent)
        if mkdir(home, workersPass ? 0o711 : 0o700) != 0, errno != EEXIST {
            throw .io(operation: "mkdir", path: home, errno: errno)
        }
        guard let mode = ownMode(home) else { return nil }
        if workersPass, mode & 0o711 != 0o711, chmod(home, 0o711) != 0 {
            throw .io(operation: "chmod", path: home, errno: errno)
        }
        return home
    }

    private static func homePath(in parent: String) -> String { "\(parent)/metascrub-\(geteuid())" }

    /// The mode of `path` when it is a folder (not a link) of this user's that no one else can write in; else nil.
    private static func ownMode(_ path: String) -> mode_t? {
        var st = stat()
        guard lstat(path, &st) == 0, st.st_mode & S_IFMT == S_IFDIR, st.st_uid == geteuid(), st.st_mode & 0o022 == 0
        else { return nil }
        return st.st_mode
    }

    /// Bytes free on the folder's file system (through the locked descriptor: no path to look up).
    var freeBytes: Int64 {
        var fs = statvfs()
        return fstatvfs(lock, &fs) == 0 ? Int64(fs.f_bavail) * Int64(fs.f_frsize) : 0
    }

    /// A job folder (0700), owned by the workers' uid when they have one of their own; `reservation`: its share of
    /// a memory spool's budget, held as long as the job.
    func makeJob(reservation: MemorySpool.Reservation? = nil) throws(ServeError) -> SpoolJob {
        var template = Array("\(path)/job-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw Self.failed("cannot create a spool folder", errno) }
        let job = SpoolJob(directory: String(cString: made), owner: workerOwner, reservation: reservation)
        if let owner = workerOwner, chown(job.directory, owner.uid, owner.gid) != 0 {
            throw Self.failed("cannot hand a spool folder to the worker", errno)
        }
        return job
    }

    static func failed(_ what: String, _ code: Int32) -> ServeError {
        ServeError(status: .serviceUnavailable, code: "spool", message: "\(what) (errno \(code))")
    }

    /// The folder, then `home` when no other server's folder is left in it.
    func remove() {
        Self.removeTree(path)
        if let home { rmdir(home) }
    }

    static func removeTree(_ path: String) { try? FileManager.default.removeItem(atPath: path) }

    /// Removes the folders of dead servers in this user's folder in `parent`, when it is this user's own.
    static func sweepDeadServers(under parent: String) {
        let home = homePath(in: parent)
        if ownMode(home) != nil { sweepDeadServers(in: home) }
    }

    /// Removes the folders of dead servers in `home` (see the type's comment).
    private static func sweepDeadServers(in home: String) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: home) else { return }
        for name in names where name.hasPrefix(prefix) {
            let pidText = name.dropFirst(prefix.count).prefix { $0 != "-" }
            guard let pid = pid_t(pidText), pid == getpid() || (kill(pid, 0) != 0 && errno == ESRCH) else { continue }
            let folder = "\(home)/\(name)"
            let fd = open(folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            if flock(fd, LOCK_EX | LOCK_NB) == 0 { removeTree(folder) }
        }
    }
}

/// One request's folder. Removed when the last reference goes, on every path: success, error, client abort,
/// timeout or a worker killed mid-file.
final class SpoolJob: Sendable {
    let directory: String
    let owner: (uid: UInt32, gid: UInt32)?
    /// Released after the folder is removed (stored properties go after `deinit` ran).
    private let reservation: MemorySpool.Reservation?
    var input: String { directory + "/input" }
    var output: String { directory + "/output" }
    var report: String { directory + "/report.json" }
    var summary: String { directory + "/summary.json" }

    init(directory: String, owner: (uid: UInt32, gid: UInt32)? = nil, reservation: MemorySpool.Reservation? = nil) {
        self.directory = directory
        self.owner = owner
        self.reservation = reservation
    }

    /// The files a job's folder normally holds are removed by name (unlink never follows a link), the folder last.
    /// Anything else in it (a temp file of a worker killed mid-write; whatever a compromised one made) makes the
    /// folder's removal fail, and the whole tree is removed the general way.
    deinit {
        for path in [input, output, report, summary] { unlink(path) }
        if rmdir(directory) != 0 { SpoolDirectory.removeTree(directory) }
    }

    /// Writes the request body to `input` as it arrives, refusing it (413) once it passes `limit`: a body is
    /// never held in memory, and an oversized one is never written beyond the limit.
    func receive(_ body: RequestBody, limit: Int64, pace: UploadPace) async throws -> Int64 {
        try await pace.enforce { [self] received in try await receive(body, limit: limit, progress: received) }
    }

    private func receive(_ body: RequestBody, limit: Int64, progress: UploadProgress) async throws -> Int64 {
        let fd = open(input, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw SpoolDirectory.failed("cannot create the spool file", errno) }
        defer { close(fd) }
        if let owner, fchown(fd, owner.uid, owner.gid) != 0 {
            throw SpoolDirectory.failed("cannot hand the spool file to the worker", errno)
        }
        var total: Int64 = 0
        for try await buffer in body {
            total += Int64(buffer.readableBytes)
            if total > limit { throw ServeError.tooLarge(limit) }
            progress.bytes.store(total, ordering: .relaxed)
            try buffer.withUnsafeReadableBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let n = write(fd, raw.baseAddress! + offset, raw.count - offset)
                    if n < 0, errno == EINTR { continue }
                    guard n > 0 else {
                        throw SpoolDirectory.failed("cannot write the spool file", errno)
                    }
                    offset += n
                }
            }
        }
        return total
    }
}

/// An open file streamed into a response; closed when the response is done with it. It holds the job whose file
/// it is, so the job's folder (and its share of a memory spool) goes only once the file has been sent.
final class OpenFile: Sendable {
    let fd: Int32
    let size: Int64
    private let job: SpoolJob?

    /// Opens `path` only when it is a regular file and not a symbolic link: a worker owns its job folder and
    /// must not be able to point the server at another file (a token, another job's output).
    init?(regularFile path: String, of job: SpoolJob? = nil) {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            return nil
        }
        self.fd = fd
        self.size = Int64(st.st_size)
        self.job = job
    }

    deinit { close(fd) }

    /// The whole file (callers check `size` first: only small files are read into memory).
    func read() -> Data? {
        var data = Data(count: Int(size))
        let n = data.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        return n == Int(size) ? data : nil
    }

    /// Lower-case hex SHA-256 of the whole file, read with pread (the descriptor's offset is not used).
    func sha256() -> String? {
        var hasher = SHA256()
        var buffer = [UInt8](repeating: 0, count: 256 << 10)
        var offset: Int64 = 0
        while offset < size {
            let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(offset)) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { return nil }
            hasher.update(buffer[0..<n])
            offset += Int64(n)
        }
        return SHA256.hexString(hasher.finalize())
    }

    /// Writes the whole file to `writer` in 256 KiB chunks.
    func stream(to writer: inout any ResponseBodyWriter) async throws {
        var offset: Int64 = 0
        let chunk = 256 << 10
        while offset < size {
            var buffer = ByteBufferAllocator().buffer(capacity: chunk)
            let n = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: chunk) { raw in
                max(0, pread(fd, raw.baseAddress, min(raw.count, chunk), off_t(offset)))
            }
            guard n > 0 else {
                throw ServeError(status: .internalServerError, code: "io",
                                 message: "the cleaned file could not be read back")
            }
            offset += Int64(n)
            try await writer.write(buffer)
        }
    }
}
