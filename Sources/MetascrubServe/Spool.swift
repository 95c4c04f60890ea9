// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Hummingbird
import MetascrubCore

#if canImport(Glibc)
import Glibc
#endif

/// The server's private spool folder (0700, its own name per process): every request gets a folder inside it
/// for the upload, the worker's output and its report. Removed when the server exits; a folder left by a killed
/// server is removed by the next one that starts (its PID is in the name).
final class SpoolDirectory: Sendable {
    let path: String
    static let prefix = "metascrub-serve-"

    init(parent: String) throws(MetascrubError) {
        Self.sweepDeadServers(in: parent)
        var template = Array("\(parent)/\(Self.prefix)\(getpid())-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw .io(operation: "mkdtemp", path: parent, errno: errno) }
        path = String(cString: made)
    }

    func makeJob() throws(ServeError) -> SpoolJob {
        var template = Array("\(path)/job-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else {
            throw ServeError(status: .serviceUnavailable, code: "spool", message: "cannot create a spool folder (errno \(errno))")
        }
        return SpoolJob(directory: String(cString: made))
    }

    func remove() { Self.removeTree(path) }

    static func removeTree(_ path: String) { try? FileManager.default.removeItem(atPath: path) }

    private static func sweepDeadServers(in parent: String) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: parent) else { return }
        for name in names where name.hasPrefix(prefix) {
            let pidText = name.dropFirst(prefix.count).prefix { $0 != "-" }
            guard let pid = pid_t(pidText), pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { continue }
            removeTree("\(parent)/\(name)")
        }
    }
}

/// One request's folder. Removed when the last reference goes, on every path: success, error, client abort,
/// timeout or a worker killed mid-file.
final class SpoolJob: Sendable {
    let directory: String
    var input: String { directory + "/input" }
    var output: String { directory + "/output" }
    var report: String { directory + "/report.json" }

    init(directory: String) { self.directory = directory }

    deinit { SpoolDirectory.removeTree(directory) }

    /// Writes the request body to `input` as it arrives, refusing it (413) once it passes `limit`: a body is
    /// never held in memory, and an oversized one is never written beyond the limit.
    func receive(_ body: RequestBody, limit: Int64) async throws -> Int64 {
        let fd = open(input, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw ServeError(status: .serviceUnavailable, code: "spool", message: "cannot create the spool file (errno \(errno))") }
        defer { close(fd) }
        var total: Int64 = 0
        for try await buffer in body {
            total += Int64(buffer.readableBytes)
            if total > limit { throw ServeError.tooLarge(limit) }
            try buffer.withUnsafeReadableBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let n = write(fd, raw.baseAddress! + offset, raw.count - offset)
                    if n < 0, errno == EINTR { continue }
                    guard n > 0 else {
                        throw ServeError(status: .serviceUnavailable, code: "spool", message: "cannot write the spool file (errno \(errno))")
                    }
                    offset += n
                }
            }
        }
        return total
    }
}

/// An open file streamed into a response; closed when the response is done with it. The spool folder may
/// already be gone: the open descriptor keeps the bytes until then.
final class OpenFile: Sendable {
    let fd: Int32
    let size: Int64

    init?(_ path: String) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            close(fd)
            return nil
        }
        self.fd = fd
        self.size = Int64(st.st_size)
    }

    deinit { close(fd) }

    /// Writes the whole file to `writer` in 256 KiB chunks.
    func stream(to writer: inout any ResponseBodyWriter) async throws {
        var offset: Int64 = 0
        let chunk = 256 << 10
        while offset < size {
            var buffer = ByteBufferAllocator().buffer(capacity: chunk)
            let n = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: chunk) { raw in
                max(0, pread(fd, raw.baseAddress, min(raw.count, chunk), off_t(offset)))
            }
            guard n > 0 else { throw ServeError(status: .internalServerError, code: "io", message: "the cleaned file could not be read back") }
            offset += Int64(n)
            try await writer.write(buffer)
        }
    }
}
