// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

#if canImport(Glibc)
import Glibc
#endif

/// Random access to a file's bytes. Readers ask only for what they need, so memory does not grow with the
/// file; every read is bounds-checked against the real size.
public protocol ByteSource: AnyObject {
    var size: Int64 { get }
    /// Exactly `count` bytes at `offset`, or `MetascrubError.truncated`.
    func read(at offset: Int64, count: Int) throws -> [UInt8]
    /// The file descriptor, when the source is a file (lets sinks copy with `copy_file_range`).
    var fileDescriptor: Int32? { get }
    /// Whether the whole file is in memory, so `withBytes` over any range costs no read and no copy.
    var isInMemory: Bool { get }
    /// Whether the whole file is mapped (a server job's own input): `withBytes` lends the mapping itself.
    var isMapped: Bool { get }
    /// `count` bytes at `offset`, lent to `body` without a copy where the source holds them (in memory);
    /// otherwise read once into a temporary buffer.
    func withBytes<R>(at offset: Int64, count: Int, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R
}

extension ByteSource {
    public var isInMemory: Bool { false }
    public var isMapped: Bool { false }

    public func withBytes<R>(at offset: Int64, count: Int, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        try read(at: offset, count: count).withUnsafeBytes(body)
    }

    /// Reads and reports a short file as truncation of the structure named by `path`.
    public func read(at offset: Int64, count: Int, format: String, path: String) throws -> [UInt8] {
        guard offset >= 0, count >= 0, offset <= size, Int64(count) <= size - offset else {
            throw MetascrubError.truncated(format: format, path: path, offset: offset, needed: Int64(count) - max(0, size - offset))
        }
        return try read(at: offset, count: count)
    }

    public func readAll(limit: Int64 = 1 << 30) throws -> [UInt8] {
        guard size <= limit else {
            throw MetascrubError.limitExceeded(format: "file", path: "whole file", offset: 0, limit: "\(limit) bytes")
        }
        return try read(at: 0, count: Int(size))
    }
}

/// A file opened read-only; reads with pread so several readers can share it.
///
/// A file up to `loadLimit` bytes (photos; not videos, so peak memory stays under 64 MB) is read into memory whole on the first read past its head, and every later
/// read is served from there: a clean scans the input, copies it and compares it with the output, and each of
/// those used to read the file again through the kernel (issue 19). Larger files stream, so memory stays flat.
public final class FileByteSource: ByteSource {
    public let path: String
    public let size: Int64
    private let fd: Int32
    private var loaded: [UInt8]?
    /// The file mapped read-only: only for a temp file this process wrote and nobody else knows of, since a
    /// mapped file that another process truncates raises SIGBUS on access.
    private var mapping: UnsafeRawBufferPointer?
    /// A large own file is mapped a window at a time for `withBytes` (its pages leave memory with the window),
    /// so comparing a 1 GB video with its original copies only the original through `pread`.
    private let mapsWindows: Bool
    /// Reads that end within this many bytes (headers, magic numbers) never load the file.
    static let headLength: Int64 = 64 << 10
    public static let loadLimit: Int64 = 16 << 20

    /// `mapOwnFile`: map the file instead of reading it (see `mapping`); for verifying our own output, which
    /// is then compared and re-scanned without a copy.
    public init(path: String, mapOwnFile: Bool = false) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw MetascrubError.io(operation: "open", path: path, errno: errno) }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            let code = errno
            close(fd)
            throw MetascrubError.io(operation: "stat", path: path, errno: code)
        }
        self.path = path
        self.fd = fd
        self.size = Int64(st.st_size)
        self.mapsWindows = mapOwnFile && size > Self.loadLimit
        if mapOwnFile, size > 0, size <= Self.loadLimit {
            let address = mmap(nil, Int(size), PROT_READ, MAP_PRIVATE, fd, 0)
            if let address, address != MAP_FAILED { mapping = UnsafeRawBufferPointer(start: address, count: Int(size)) }
        }
    }

    deinit {
        if let mapping { munmap(UnsafeMutableRawPointer(mutating: mapping.baseAddress), mapping.count) }
        close(fd)
    }

    public var fileDescriptor: Int32? { fd }
    public var isInMemory: Bool { size <= Self.loadLimit }
    public var isMapped: Bool { mapping != nil }

    public func read(at offset: Int64, count: Int) throws -> [UInt8] {
        try check(offset, count)
        if count == 0 { return [] }
        if let mapping { return Array(mapping[Int(offset)..<Int(offset) + count]) }
        if let bytes = try memory(through: offset + Int64(count)) {
            return Array(bytes[Int(offset)..<Int(offset) + count])
        }
        return try pread(at: offset, count: count)
    }

    public func withBytes<R>(at offset: Int64, count: Int, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        try check(offset, count)
        if let mapping { return try body(UnsafeRawBufferPointer(rebasing: mapping[Int(offset)..<Int(offset) + count])) }
        if mapsWindows, count > 0 {
            let page = Int64(sysconf(Int32(_SC_PAGESIZE)))
            let start = offset / page * page, length = Int(offset - start) + count
            let address = mmap(nil, length, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, off_t(start))
            if let address, address != MAP_FAILED {
                defer { munmap(address, length) }
                return try body(UnsafeRawBufferPointer(start: address + Int(offset - start), count: count))
            }
        }
        if let bytes = try memory(through: offset + Int64(count)) {
            return try bytes.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[Int(offset)..<Int(offset) + count])) }
        }
        return try pread(at: offset, count: count).withUnsafeBytes(body)
    }

    private func check(_ offset: Int64, _ count: Int) throws {
        guard offset >= 0, count >= 0, offset <= size, Int64(count) <= size - offset else {
            throw MetascrubError.truncated(format: "file", path: path, offset: offset, needed: Int64(count))
        }
    }

    /// The whole file, once a read reaches past the head of a file small enough to hold.
    private func memory(through end: Int64) throws -> [UInt8]? {
        if let loaded { return loaded }
        guard size <= Self.loadLimit, end > Self.headLength || size <= Self.headLength else { return nil }
        let bytes = try pread(at: 0, count: Int(size))
        loaded = bytes
        return bytes
    }

    private func pread(at offset: Int64, count: Int) throws -> [UInt8] {
        if count == 0 { return [] }
        var done = 0
        let bytes = try [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            while done < count {
                let n = Glibc.pread(fd, buffer.baseAddress! + done, count - done, off_t(offset) + off_t(done))
                if n < 0 {
                    if errno == EINTR { continue }
                    initialized = done
                    throw MetascrubError.io(operation: "read", path: path, errno: errno)
                }
                if n == 0 { break }
                done += n
            }
            initialized = done
        }
        guard done == count else {
            throw MetascrubError.truncated(format: "file", path: path, offset: offset + Int64(done), needed: Int64(count - done))
        }
        return bytes
    }
}

/// Bytes already in memory (tests, results of a library transform).
public final class MemoryByteSource: ByteSource {
    public let bytes: [UInt8]
    public init(_ bytes: [UInt8]) { self.bytes = bytes }
    public var size: Int64 { Int64(bytes.count) }
    public var fileDescriptor: Int32? { nil }
    public var isInMemory: Bool { true }

    public func read(at offset: Int64, count: Int) throws -> [UInt8] {
        guard offset >= 0, count >= 0, offset <= size, Int64(count) <= size - offset else {
            throw MetascrubError.truncated(format: "memory", path: "buffer", offset: offset, needed: Int64(count))
        }
        return Array(bytes[Int(offset)..<Int(offset) + count])
    }

    public func withBytes<R>(at offset: Int64, count: Int, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        guard offset >= 0, count >= 0, offset <= size, Int64(count) <= size - offset else {
            throw MetascrubError.truncated(format: "memory", path: "buffer", offset: offset, needed: Int64(count))
        }
        return try bytes.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[Int(offset)..<Int(offset) + count])) }
    }
}

/// Sequential reading through a source with a large buffer, for walking entropy-coded data or chunk lists.
public struct BufferedReader {
    public let source: any ByteSource
    public private(set) var position: Int64
    private var buffer: [UInt8] = []
    private var bufferStart: Int64 = 0
    private let chunk: Int

    public init(_ source: any ByteSource, at position: Int64 = 0, chunk: Int = 1 << 20) {
        self.source = source
        self.position = position
        self.chunk = chunk
    }

    public var remaining: Int64 { source.size - position }

    public mutating func seek(_ offset: Int64) { position = offset }

    /// The next byte, or nil at the end of the source.
    public mutating func next() throws -> UInt8? {
        if position >= source.size { return nil }
        if position < bufferStart || position >= bufferStart + Int64(buffer.count) {
            try fill()
        }
        let byte = buffer[Int(position - bufferStart)]
        position += 1
        return byte
    }

    /// Offset of the next 0xFF at or after the position (the position moves there), or nil at the end.
    public mutating func seekToNextFF() throws -> Int64? {
        while position < source.size {
            if position < bufferStart || position >= bufferStart + Int64(buffer.count) { try fill() }
            let start = Int(position - bufferStart)
            let found: Int? = buffer.withUnsafeBufferPointer { buf in
                guard start < buf.count else { return nil }
                guard let p = memchr(buf.baseAddress! + start, 0xFF, buf.count - start) else { return nil }
                return UnsafeRawPointer(p) - UnsafeRawPointer(buf.baseAddress!)
            }
            if let index = found {
                position = bufferStart + Int64(index)
                return position
            }
            position = bufferStart + Int64(buffer.count)
        }
        return nil
    }

    private mutating func fill() throws {
        let count = Int(min(Int64(chunk), source.size - position))
        buffer = try source.read(at: position, count: count)
        bufferStart = position
    }
}
