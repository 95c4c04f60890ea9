// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// Reads big-endian fields from a box payload held in memory. Reading past the end is a typed error naming the
/// box path and the file offset of the field, never a crash.
public struct ByteCursor {
    public let bytes: [UInt8]
    public private(set) var position: Int
    /// File offset of `bytes[0]`, for error offsets.
    public let origin: Int64
    public let format: String
    public let path: String

    public init(_ bytes: [UInt8], origin: Int64, format: String, path: String, position: Int = 0) {
        self.bytes = bytes
        self.origin = origin
        self.format = format
        self.path = path
        self.position = position
    }

    public var remaining: Int { bytes.count - position }
    public var atEnd: Bool { position >= bytes.count }
    /// File offset of the next byte.
    public var fileOffset: Int64 { origin + Int64(position) }

    public func malformed(_ reason: String) -> MetascrubError {
        .malformed(format: format, path: path, offset: fileOffset, reason: reason)
    }

    private mutating func need(_ n: Int, _ what: String) throws {
        guard n >= 0, n <= remaining else { throw malformed("\(what) runs past the end of the box") }
    }

    public mutating func u8(_ what: String = "field") throws -> UInt8 {
        try need(1, what)
        defer { position += 1 }
        return bytes[position]
    }

    public mutating func u16(_ what: String = "field") throws -> UInt16 {
        UInt16(try uint(size: 2, what))
    }

    public mutating func u32(_ what: String = "field") throws -> UInt32 {
        UInt32(try uint(size: 4, what))
    }

    public mutating func u64(_ what: String = "field") throws -> UInt64 {
        try uint(size: 8, what)
    }

    /// An unsigned big-endian integer of `size` bytes (0 to 8; 0 reads nothing and gives 0).
    public mutating func uint(size: Int, _ what: String = "field") throws -> UInt64 {
        guard (0...8).contains(size) else { throw malformed("\(what) has an invalid field size \(size)") }
        try need(size, what)
        var value: UInt64 = 0
        for i in 0..<size { value = value << 8 | UInt64(bytes[position + i]) }
        position += size
        return value
    }

    public mutating func fourCC(_ what: String = "four-character code") throws -> FourCC {
        try need(4, what)
        defer { position += 4 }
        return FourCC(bytes: bytes[position..<position + 4])
    }

    public mutating func take(_ n: Int, _ what: String = "field") throws -> [UInt8] {
        try need(n, what)
        defer { position += n }
        return Array(bytes[position..<position + n])
    }

    public mutating func skip(_ n: Int, _ what: String = "field") throws {
        try need(n, what)
        position += n
    }

    /// A NUL-terminated UTF-8 string; a missing terminator at the very end of the box is tolerated.
    public mutating func cString(_ what: String = "string") throws -> String {
        let start = position
        while position < bytes.count, bytes[position] != 0 { position += 1 }
        let text = String(decoding: bytes[start..<position], as: UTF8.self)
        if position < bytes.count { position += 1 }
        return text
    }

    /// Version and flags of a full box.
    public mutating func fullBoxHeader() throws -> (version: UInt8, flags: UInt32) {
        let word = try u32("version and flags")
        return (UInt8(word >> 24), word & 0xFF_FFFF)
    }
}

/// Builds big-endian payloads.
public struct ByteWriter {
    public private(set) var bytes: [UInt8] = []

    public init() {}

    public var count: Int { bytes.count }

    public mutating func u8(_ v: UInt8) { bytes.append(v) }
    public mutating func u16(_ v: UInt16) { uint(UInt64(v), size: 2) }
    public mutating func u32(_ v: UInt32) { uint(UInt64(v), size: 4) }
    public mutating func u64(_ v: UInt64) { uint(v, size: 8) }

    /// `v` in `size` bytes (0 to 8); the caller has checked that it fits.
    public mutating func uint(_ v: UInt64, size: Int) {
        for i in stride(from: size - 1, through: 0, by: -1) { bytes.append(UInt8((v >> (8 * UInt64(i))) & 0xFF)) }
    }

    public mutating func fourCC(_ code: FourCC) { bytes += code.bytes }
    public mutating func append<C: Collection>(_ more: C) where C.Element == UInt8 { bytes.append(contentsOf: more) }

    public mutating func fullBoxHeader(version: UInt8, flags: UInt32) {
        u32(UInt32(version) << 24 | (flags & 0xFF_FFFF))
    }

    /// Whether `v` fits in `size` bytes.
    public static func fits(_ v: UInt64, size: Int) -> Bool {
        size >= 8 || v < (UInt64(1) << (8 * UInt64(size)))
    }
}
