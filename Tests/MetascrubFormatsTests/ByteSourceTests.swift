// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
@testable import MetascrubFormats
import XCTest

/// The read paths of issue 19 serve the same bytes as plain reads: a small file held in memory, an own file
/// mapped whole, a large own file mapped a window at a time, and a large input streamed.
final class ByteSourceTests: XCTestCase {
    func testEveryReadPathServesTheFilesBytes() throws {
        for size in [100, 70_000, Int(FileByteSource.loadLimit) + 12_345] {
            var bytes = [UInt8](repeating: 0, count: size)
            var state: UInt32 = 12345
            for i in bytes.indices {
                state = state &* 1_103_515_245 &+ 12345
                bytes[i] = UInt8(truncatingIfNeeded: state >> 16)
            }
            let path = NSTemporaryDirectory() + "metascrub-bytesource-\(UUID().uuidString)"
            FileManager.default.createFile(atPath: path, contents: Data(bytes))
            defer { try? FileManager.default.removeItem(atPath: path) }
            for mapped in [false, true] {
                let source = try FileByteSource(path: path, mapOwnFile: mapped)
                XCTAssertEqual(source.size, Int64(size))
                for (offset, count) in [(0, min(10, size)), (size / 3 + 1, min(5000, size / 2)), (size - 7, 7), (size, 0)] {
                    let expected = Array(bytes[offset..<offset + count])
                    XCTAssertEqual(try source.read(at: Int64(offset), count: count), expected, "read \(size)/\(mapped) at \(offset)")
                    XCTAssertEqual(try source.withBytes(at: Int64(offset), count: count) { Array($0) }, expected,
                                   "withBytes \(size)/\(mapped) at \(offset)")
                }
                XCTAssertThrowsError(try source.read(at: Int64(size - 1), count: 2))
                XCTAssertThrowsError(try source.withBytes(at: Int64(size - 1), count: 2) { _ in () })
            }
        }
    }
}
