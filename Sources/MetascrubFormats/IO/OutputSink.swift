// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

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
