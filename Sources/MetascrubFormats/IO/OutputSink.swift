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

/// Collects output in memory (tests, small intermediate results).
public final class MemoryOutputSink: OutputSink {
    public private(set) var bytes: [UInt8] = []
    public init() {}
    public var bytesWritten: Int64 { Int64(bytes.count) }
    public func write(_ bytes: [UInt8]) throws { self.bytes.append(contentsOf: bytes) }
    public func copy(from source: any ByteSource, offset: Int64, count: Int64) throws {
        var done: Int64 = 0
        while done < count {
            let n = Int(min(count - done, 1 << 22))
            bytes.append(contentsOf: try source.read(at: offset + done, count: n))
            done += Int64(n)
        }
    }
}
