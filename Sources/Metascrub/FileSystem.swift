// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

#if canImport(Glibc)
import Glibc
#endif

/// Every file-system call the pipeline makes that can lose or corrupt data goes through here, so tests can
/// inject failures (ENOSPC, EIO, a failed rename or fsync).
public protocol FileSystem: Sendable {
    /// Creates a new, empty temp file (mode 0600) in `directory`; returns its descriptor and path.
    func createTemporary(in directory: String, hint: String) throws -> (fd: Int32, path: String)
    func fsync(_ fd: Int32, path: String) throws
    func close(_ fd: Int32)
    func rename(_ from: String, to: String) throws
    func unlink(_ path: String)
    /// fsyncs a directory so a rename inside it survives a crash.
    func syncDirectory(_ path: String) throws
    func makeDirectories(_ path: String) throws
    func setMode(_ fd: Int32, mode: mode_t, path: String) throws
}

public struct PosixFileSystem: FileSystem {
    public init() {}

    /// Temp files carry this prefix so a later run can recognise and remove those a killed run left.
    public static let temporaryPrefix = ".metascrub-"

    public func createTemporary(in directory: String, hint: String) throws -> (fd: Int32, path: String) {
        let base = String(hint.split(separator: "/").last ?? "out").prefix(40)
        for _ in 0..<16 {
            let path = "\(directory)/\(Self.temporaryPrefix)\(UInt64.random(in: 0...UInt64.max) & 0xFFFF_FFFF_FFFF)-\(getpid())-\(base).tmp"
            let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            if fd >= 0 { return (fd, path) }
            if errno != EEXIST { throw MetascrubError.io(operation: "create temporary file in", path: directory, errno: errno) }
        }
        throw MetascrubError.io(operation: "create temporary file in", path: directory, errno: EEXIST)
    }

    public func fsync(_ fd: Int32, path: String) throws {
        if Glibc.fsync(fd) != 0 { throw MetascrubError.io(operation: "fsync", path: path, errno: errno) }
    }

    public func close(_ fd: Int32) { _ = Glibc.close(fd) }

    public func rename(_ from: String, to: String) throws {
        if Glibc.rename(from, to) != 0 { throw MetascrubError.io(operation: "rename to", path: to, errno: errno) }
    }

    public func unlink(_ path: String) { _ = Glibc.unlink(path) }

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
}
