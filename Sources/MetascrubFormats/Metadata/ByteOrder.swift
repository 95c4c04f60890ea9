// SPDX-License-Identifier: GPL-3.0-or-later

/// Reads and writes integers in a TIFF/EXIF byte order.
public struct ByteOrder: Sendable, Equatable {
    public let bigEndian: Bool

    public static let big = ByteOrder(bigEndian: true)
    public static let little = ByteOrder(bigEndian: false)

    public func u16(_ b: [UInt8], _ o: Int) -> UInt16 {
        bigEndian ? UInt16(b[o]) << 8 | UInt16(b[o + 1]) : UInt16(b[o + 1]) << 8 | UInt16(b[o])
    }

    public func u32(_ b: [UInt8], _ o: Int) -> UInt32 {
        bigEndian
            ? UInt32(b[o]) << 24 | UInt32(b[o + 1]) << 16 | UInt32(b[o + 2]) << 8 | UInt32(b[o + 3])
            : UInt32(b[o + 3]) << 24 | UInt32(b[o + 2]) << 16 | UInt32(b[o + 1]) << 8 | UInt32(b[o])
    }

    public func bytes(_ v: UInt16) -> [UInt8] {
        bigEndian ? [UInt8(v >> 8), UInt8(v & 0xFF)] : [UInt8(v & 0xFF), UInt8(v >> 8)]
    }

    public func bytes(_ v: UInt32) -> [UInt8] {
        let be = [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)]
        return bigEndian ? be : be.reversed()
    }
}

/// Big-endian helpers for container formats (JPEG, PNG, ISOBMFF).
public enum BigEndian {
    public static func u16(_ b: [UInt8], _ o: Int) -> Int { Int(b[o]) << 8 | Int(b[o + 1]) }
    public static func u32(_ b: [UInt8], _ o: Int) -> Int {
        Int(b[o]) << 24 | Int(b[o + 1]) << 16 | Int(b[o + 2]) << 8 | Int(b[o + 3])
    }
    public static func bytes16(_ v: Int) -> [UInt8] { [UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }
    public static func bytes32(_ v: Int) -> [UInt8] {
        [UInt8((v >> 24) & 0xFF), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)]
    }
}
