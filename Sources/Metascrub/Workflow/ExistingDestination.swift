// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubFormats

#if canImport(Glibc)
import Glibc
#endif

/// What is already at a path the run is about to write (an output, a report), and so how it may be written.
/// Renaming a temp file over a path replaces whatever was there: as root in a container, `--output /dev/null`
/// would replace the device with a regular file. So only a regular file is ever renamed over, and only when the
/// run is allowed to replace it; special files are opened and written; symbolic links are refused.
public enum ExistingDestination: Equatable, Sendable {
    /// Nothing there: a new file, written atomically.
    case none
    /// A regular file (device and inode), replaced atomically when allowed.
    case regularFile(device: UInt64, inode: UInt64)
    /// A FIFO, a device, a terminal or a standard stream named by path (`/dev/stdout`): opened and written,
    /// never renamed over.
    case writeThrough

    public static func of(_ path: String) throws(MetascrubError) -> ExistingDestination {
        var st = stat()
        guard lstat(path, &st) == 0 else {
            if errno == ENOENT { return .none }
            throw .io(operation: "inspect", path: path, errno: errno)
        }
        switch st.st_mode & S_IFMT {
        case S_IFREG:
            return .regularFile(device: UInt64(st.st_dev), inode: UInt64(st.st_ino))
        case S_IFDIR:
            throw .unsupported(format: "path", reason: "\(path) is a folder; nothing was written")
        case S_IFLNK:
            // A standard stream redirected to a file still goes to that file, through its open descriptor.
            if namesStandardStream(path) { return .writeThrough }
            var target = stat()
            if stat(path, &target) == 0, target.st_mode & S_IFMT != S_IFREG, target.st_mode & S_IFMT != S_IFDIR {
                return .writeThrough
            }
            throw .unsupported(format: "path", reason: "\(path) is a symbolic link; nothing was written (name the file it leads to)")
        default:
            return .writeThrough
        }
    }

    /// `/dev/stdout`, `/dev/stderr`, `/dev/fd/N`, `/proc/self/fd/N`: links to this process's own descriptors.
    static func namesStandardStream(_ path: String) -> Bool {
        ["/dev/stdout", "/dev/stderr"].contains(path) || path.hasPrefix("/dev/fd/") || path.hasPrefix("/proc/self/fd/")
    }

    /// Whether two paths are the same file (both exist; hard links count as the same).
    public static func sameFile(_ a: String, _ b: String) -> Bool {
        var sa = stat(), sb = stat()
        guard stat(a, &sa) == 0, stat(b, &sb) == 0 else { return false }
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino
    }

    /// Opens a special file and writes all of `bytes` to it (no temp file, no rename, no truncation of a device).
    public static func writeThrough(_ bytes: [UInt8], to path: String) throws(MetascrubError) {
        let fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { throw .io(operation: "open", path: path, errno: errno) }
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + done, bytes.count - done) }
            if n < 0 {
                if errno == EINTR { continue }
                let code = errno
                _ = close(fd)
                throw .io(operation: "write", path: path, errno: code)
            }
            done += n
        }
        guard close(fd) == 0 || errno == EINTR else { throw .io(operation: "write", path: path, errno: errno) }
    }

    /// Whether the file at `path` holds exactly the bytes of `temp` (an earlier run's output of this same input).
    static func sameContent(_ path: String, _ temp: String, _ fs: any FileSystem) throws -> Bool {
        let existing = try FileByteSource(path: path)
        let written = try fs.openOwnTemporary(temp)
        guard existing.size == written.size else { return false }
        var offset: Int64 = 0
        let chunk = 1 << 20
        while offset < existing.size {
            let count = Int(min(Int64(chunk), existing.size - offset))
            guard try existing.read(at: offset, count: count) == written.read(at: offset, count: count) else { return false }
            offset += Int64(count)
        }
        return true
    }

    static func refusal(_ path: String) -> MetascrubError {
        .unsupported(format: "path", reason: "\(path) already exists and is not this input's output; nothing was written (--overwrite replaces it)")
    }
}
