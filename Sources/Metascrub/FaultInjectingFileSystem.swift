// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubFormats
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A `FileSystem` that fails chosen calls: "the 2nd write fails with ENOSPC", "every rename fails with EIO".
/// Everything else is passed to `base`. In the library (not only in tests) so any test target, and a
/// downstream embedder's tests, can prove that a failure leaves the original untouched and no temp file behind.
public final class FaultInjectingFileSystem: FileSystem {
    public enum Operation: String, Sendable, CaseIterable {
        case openForReading, createTemporary, write, copyRange, fsync, rename, syncDirectory, makeDirectories
        case openForAttributes, setMode, setTimes, entries, unlink, flush
    }

    public struct Fault: Sendable, Equatable {
        public var operation: Operation
        /// Which call of that kind fails, counting from 1; nil: every one.
        public var nth: Int?
        public var errno: Int32

        public init(_ operation: Operation, nth: Int? = 1, errno: Int32) {
            self.operation = operation
            self.nth = nth
            self.errno = errno
        }
    }

    private let base: any FileSystem
    private let faults: [Fault]
    private let state = Mutex(State())

    private struct State {
        var counts: [Operation: Int] = [:]
        var injected: [String] = []
    }

    public init(base: any FileSystem = PosixFileSystem(), faults: [Fault]) {
        self.base = base
        self.faults = faults
    }

    /// How many calls of each kind were made, and which failures were injected ("write #2: errno 28").
    public var calls: [Operation: Int] { state.withLock { $0.counts } }
    public var injected: [String] { state.withLock { $0.injected } }

    /// Counts the call; returns the errno to fail it with, if a fault matches.
    private func fault(_ operation: Operation) -> Int32? {
        state.withLock { state in
            let n = state.counts[operation, default: 0] + 1
            state.counts[operation] = n
            guard let fault = faults.first(where: { $0.operation == operation && ($0.nth == nil || $0.nth == n) }) else { return nil }
            state.injected.append("\(operation.rawValue) #\(n): errno \(fault.errno)")
            return fault.errno
        }
    }

    private func check(_ operation: Operation, _ what: String, _ path: String) throws {
        if let code = fault(operation) { throw MetascrubError.io(operation: what, path: path, errno: code) }
    }

    public func openForReading(_ path: String) throws -> FileByteSource {
        try check(.openForReading, "open", path)
        return try base.openForReading(path)
    }

    public func openOwnTemporary(_ path: String) throws -> FileByteSource {
        try check(.openForReading, "open", path)
        return try base.openOwnTemporary(path)
    }

    public func createTemporary(in directory: String, hint: String) throws -> (fd: Int32, path: String) {
        try check(.createTemporary, "create temporary file in", directory)
        return try base.createTemporary(in: directory, hint: hint)
    }

    public func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws {
        if let code = fault(.write) {
            // Like a real full disk: part of the data may already be on disk when the error comes.
            try base.write(fd, UnsafeRawBufferPointer(rebasing: bytes.prefix(bytes.count / 2)), path: path)
            throw MetascrubError.io(operation: "write", path: path, errno: code)
        }
        try base.write(fd, bytes, path: path)
    }

    public func copyRange(from input: Int32, offset: inout Int64, to fd: Int32, count: Int, path: String) throws -> Int {
        try check(.copyRange, "copy", path)
        return try base.copyRange(from: input, offset: &offset, to: fd, count: count, path: path)
    }

    public func startWriteback(_ fd: Int32) { base.startWriteback(fd) }

    public func fsync(_ fd: Int32, path: String) throws {
        try check(.fsync, "fsync", path)
        try base.fsync(fd, path: path)
    }

    public func close(_ fd: Int32) { base.close(fd) }

    public func rename(_ from: String, to: String) throws {
        try check(.rename, "rename to", to)
        try base.rename(from, to: to)
    }

    /// A failed unlink leaves the file (unlink reports nothing to its caller).
    public func unlink(_ path: String) {
        if fault(.unlink) != nil { return }
        base.unlink(path)
    }

    public func syncDirectory(_ path: String) throws {
        try check(.syncDirectory, "fsync directory", path)
        try base.syncDirectory(path)
    }

    public func makeDirectories(_ path: String) throws {
        try check(.makeDirectories, "create directory", path)
        try base.makeDirectories(path)
    }

    public func openForAttributes(_ path: String) throws -> Int32 {
        try check(.openForAttributes, "open", path)
        return try base.openForAttributes(path)
    }

    public func setMode(_ fd: Int32, mode: mode_t, path: String) throws {
        try check(.setMode, "chmod", path)
        try base.setMode(fd, mode: mode, path: path)
    }

    public func setTimes(_ fd: Int32, access: timespec, modification: timespec, path: String) throws {
        try check(.setTimes, "set times of", path)
        try base.setTimes(fd, access: access, modification: modification, path: path)
    }

    public func entries(of directory: String) throws -> [String] {
        try check(.entries, "open directory", directory)
        return try base.entries(of: directory)
    }

    public func linkStatus(_ path: String) -> stat? { base.linkStatus(path) }

    public func flush(_ paths: [String]) throws {
        try check(.flush, "fsync", paths.first ?? "")
        try base.flush(paths)
    }
}
