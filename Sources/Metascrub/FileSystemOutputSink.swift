// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubFormats

#if canImport(Glibc)
import Glibc
#endif

/// The engine's output sink: buffered writes and kernel copies of kept bytes, every write and copy through a
/// `FileSystem`, so a test can make the Nth write fail with ENOSPC or EIO.
final class FileSystemOutputSink: PatchableOutputSink {
    private let fileSystem: any FileSystem
    private let fd: Int32
    private let path: String
    private var buffer: [UInt8] = []
    private let bufferLimit = 1 << 20
    private var flushed: Int64 = 0
    /// Bytes copied between two starts of write-back in a long copy.
    static let writebackSlice: Int64 = 32 << 20

    init(fileSystem: any FileSystem, fd: Int32, path: String) {
        self.fileSystem = fileSystem
        self.fd = fd
        self.path = path
        buffer.reserveCapacity(bufferLimit)
    }

    var bytesWritten: Int64 { flushed + Int64(buffer.count) }

    func write(_ bytes: [UInt8]) throws {
        if buffer.count + bytes.count > bufferLimit { try flush() }
        if bytes.count >= bufferLimit {
            try writeAll(bytes)
        } else {
            buffer.append(contentsOf: bytes)
        }
    }

    func copy(from source: any ByteSource, offset: Int64, count: Int64) throws {
        guard count > 0 else { return }
        guard offset >= 0, count <= source.size - offset else {
            throw MetascrubError.truncated(format: "file", path: path, offset: offset, needed: count)
        }
        var at = offset
        var left = count
        // A mapped source (a server job's input) is written from the mapping in one go: one copy, where the kernel's
        // copy (a splice through a pipe, on file systems that cannot share extents) costs half as much again.
        if count >= 64 * 1024, source.isMapped {
            try flush()
            try source.withBytes(at: at, count: Int(left)) { try fileSystem.write(fd, $0, path: path) }
            flushed += left
            return
        }
        // Large runs of kept bytes (image and sample data) are copied in the kernel, a slice at a time with the
        // write-back of each started as the next is copied: the disk writes a large video while it is being copied
        // and verified, instead of all of it in the run's closing sync (issue 25, round 3).
        if let inFD = source.fileDescriptor, count >= 64 * 1024 {
            try flush()
            while left > 0 {
                let n = try fileSystem.copyRange(from: inFD, offset: &at, to: fd, count: Int(min(left, Self.writebackSlice)), path: path)
                if n == 0 { break }
                left -= Int64(n)
                flushed += Int64(n)
                if left > 0 { fileSystem.startWriteback(fd) }
            }
        }
        while left > 0 {
            let n = Int(min(left, Int64(bufferLimit)))
            try write(try source.read(at: at, count: n))
            at += Int64(n)
            left -= Int64(n)
        }
    }

    func flush() throws {
        guard !buffer.isEmpty else { return }
        try writeAll(buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    /// Writes through the file system at `offset` (so injected faults reach patches too), then returns to the end.
    func overwrite(_ bytes: [UInt8], at offset: Int64) throws {
        guard offset >= 0, offset + Int64(bytes.count) <= bytesWritten else {
            throw MetascrubError.malformed(format: "output", path: path, offset: offset, reason: "overwrite past the end of the written bytes")
        }
        try flush()
        guard lseek(fd, off_t(offset), SEEK_SET) >= 0 else { throw MetascrubError.io(operation: "seek", path: path, errno: errno) }
        defer { _ = lseek(fd, 0, SEEK_END) }
        try bytes.withUnsafeBytes { try fileSystem.write(fd, $0, path: path) }
    }

    private func writeAll(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try fileSystem.write(fd, $0, path: path) }
        flushed += Int64(bytes.count)
    }
}

