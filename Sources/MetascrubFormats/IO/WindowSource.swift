// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// A range of another source seen as a whole file, for structures that count their offsets from their own
/// start (a TIFF inside a CR3 box). The file descriptor is not passed on: offsets would not match.
final class WindowSource: ByteSource {
    let base: ByteSource
    let range: Range<Int64>

    init(_ base: any ByteSource, _ range: Range<Int64>) {
        self.base = base
        self.range = range
    }

    var size: Int64 { Int64(range.count) }
    var fileDescriptor: Int32? { nil }

    func read(at offset: Int64, count: Int) throws -> [UInt8] {
        guard offset >= 0, count >= 0, offset <= size, Int64(count) <= size - offset else {
            throw MetascrubError.truncated(format: "window", path: "read", offset: range.lowerBound + offset,
                                           needed: Int64(count) - max(0, size - offset))
        }
        return try base.read(at: range.lowerBound + offset, count: count)
    }
}
