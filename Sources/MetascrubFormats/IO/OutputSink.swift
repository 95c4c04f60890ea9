// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import CPlatform

#if canImport(Glibc)
import Glibc
#endif

/// Where a remuxer writes. Kept bytes are copied from the source in large blocks (in the kernel when both
/// ends are files), so coded image and sample data never pass through parsing code.
public protocol OutputSink: AnyObject {
    func write(_ bytes: [UInt8]) throws
    /// Copies `count` bytes from `source` at `offset` unchanged.
    func copy(from source: any ByteSource, offset: Int64, count: Int64) throws
    var bytesWritten: Int64 { get }
}

/// A sink that can overwrite bytes it already wrote, for writers that patch a header once the data is
/// known (libavformat's muxers seek back to fill in sizes and indexes).
public protocol PatchableOutputSink: OutputSink {
    /// Overwrites written bytes at `offset`; `offset + bytes.count` must not pass `bytesWritten`.
    func overwrite(_ bytes: [UInt8], at offset: Int64) throws
}

/// Collects output in memory (tests, small intermediate results).
public final class MemoryOutputSink: PatchableOutputSink {
    public private(set) var bytes: [UInt8] = []
    public init() {}
    public var bytesWritten: Int64 { Int64(bytes.count) }
    public func write(_ bytes: [UInt8]) throws { self.bytes.append(contentsOf: bytes) }
    public func overwrite(_ bytes: [UInt8], at offset: Int64) throws {
        guard offset >= 0, offset + Int64(bytes.count) <= Int64(self.bytes.count) else {
            throw MetascrubError.malformed(format: "output", path: "patch", offset: offset, reason: "overwrite past the end of the written bytes")
        }
        self.bytes.replaceSubrange(Int(offset)..<Int(offset) + bytes.count, with: bytes)
    }
    public func copy(from source: any ByteSource, offset: Int64, count: Int64) throws {
        var done: Int64 = 0
        while done < count {
            let n = Int(min(count - done, 1 << 22))
            bytes.append(contentsOf: try source.read(at: offset + done, count: n))
            done += Int64(n)
        }
    }
}

/// Writes to an open file descriptor with a buffer; copies between files with `copy_file_range`.
public final class FileOutputSink: PatchableOutputSink {
    private let fd: Int32
    private let path: String
    private var buffer: [UInt8] = []
    private let bufferLimit = 1 << 20
    private var flushed: Int64 = 0

    public init(fd: Int32, path: String) {
        self.fd = fd
        self.path = path
        buffer.reserveCapacity(bufferLimit)
    }

    public var bytesWritten: Int64 { flushed + Int64(buffer.count) }

    public func write(_ bytes: [UInt8]) throws {
        if buffer.count + bytes.count > bufferLimit { try flush() }
        if bytes.count >= bufferLimit {
            try writeAll(bytes)
        } else {
            buffer.append(contentsOf: bytes)
        }
    }

    public func copy(from source: any ByteSource, offset: Int64, count: Int64) throws {
        guard count > 0 else { return }
        guard offset >= 0, count <= source.size - offset else {
            throw MetascrubError.truncated(format: "file", path: path, offset: offset, needed: count)
        }
        if let inFD = source.fileDescriptor, count >= 64 * 1024 {
            try flush()
            var inOffset = CLongLong(offset)
            var left = count
            while left > 0 {
                let n = ms_copy_file_range(inFD, &inOffset, fd, Int(min(left, 1 << 30)))
                if n < 0 {
                    if errno == EINTR { continue }
                    if errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP { break }
                    throw MetascrubError.io(operation: "copy", path: path, errno: errno)
                }
                if n == 0 { break }
                left -= Int64(n)
                flushed += Int64(n)
            }
            if left == 0 { return }
            // Fall back to reading through user space for whatever the kernel did not copy.
            try copyThroughBuffer(source, offset: Int64(inOffset), count: left)
            return
        }
        try copyThroughBuffer(source, offset: offset, count: count)
    }

    private func copyThroughBuffer(_ source: any ByteSource, offset: Int64, count: Int64) throws {
        var done: Int64 = 0
        while done < count {
            let n = Int(min(count - done, Int64(bufferLimit)))
            try write(try source.read(at: offset + done, count: n))
            done += Int64(n)
        }
    }

    public func flush() throws {
        guard !buffer.isEmpty else { return }
        try writeAll(buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    public func overwrite(_ bytes: [UInt8], at offset: Int64) throws {
        guard offset >= 0, offset + Int64(bytes.count) <= bytesWritten else {
            throw MetascrubError.malformed(format: "output", path: path, offset: offset, reason: "overwrite past the end of the written bytes")
        }
        try flush()
        var done = 0
        try bytes.withUnsafeBytes { raw in
            while done < raw.count {
                let n = pwrite(fd, raw.baseAddress! + done, raw.count - done, off_t(offset) + off_t(done))
                if n < 0 {
                    if errno == EINTR { continue }
                    throw MetascrubError.io(operation: "write", path: path, errno: errno)
                }
                done += n
            }
        }
    }

    private func writeAll(_ bytes: [UInt8]) throws {
        var done = 0
        try bytes.withUnsafeBytes { raw in
            while done < raw.count {
                let n = Glibc.write(fd, raw.baseAddress! + done, raw.count - done)
                if n < 0 {
                    if errno == EINTR { continue }
                    throw MetascrubError.io(operation: "write", path: path, errno: errno)
                }
                done += n
            }
        }
        flushed += Int64(bytes.count)
    }
}
