// SPDX-License-Identifier: GPL-3.0-or-later

/// One box header as found in the file: where the box is, how its size was written, and its path.
public struct Box: Sendable, Equatable {
    /// How the size field was written, so a rewrite can keep the form.
    public enum SizeForm: Sendable, Equatable {
        /// 32-bit size.
        case compact
        /// size == 1 and a 64-bit `largesize`.
        case large
        /// size == 0: the box runs to the end of its container (the file, at top level).
        case toEnd
    }

    public var type: FourCC
    /// File offset of the first header byte.
    public var offset: Int64
    /// Total size, header included.
    public var size: Int64
    /// 8, 16 with a largesize, plus 16 for a `uuid` box's extended type.
    public var headerSize: Int
    public var sizeForm: SizeForm
    /// The 16-byte extended type of a `uuid` box.
    public var extendedType: [UInt8]?
    /// Where the box is, as types from the top: `meta/iprp/ipco/colr`. Used in errors and item locations.
    public var path: String

    public var payloadOffset: Int64 { offset + Int64(headerSize) }
    public var payloadSize: Int64 { size - Int64(headerSize) }
    public var end: Int64 { offset + size }
    public var range: Range<Int64> { offset..<end }
    public var payloadRange: Range<Int64> { payloadOffset..<end }
}

/// Well-known `uuid` extended types.
public enum BoxUUID {
    /// XMP in a `uuid` box (Adobe).
    public static let xmp: [UInt8] = [0xBE, 0x7A, 0xCF, 0xCB, 0x97, 0xA9, 0x42, 0xE8, 0x9C, 0x71, 0x99, 0x94, 0x91, 0xE3, 0xAF, 0xAC]
    /// C2PA manifest store in ISOBMFF files (C2PA 1.x, §"Embedding manifests into BMFF").
    public static let c2pa: [UInt8] = [0xD8, 0xFE, 0xC3, 0xD6, 0x1B, 0x0E, 0x48, 0x3C, 0x92, 0x97, 0x58, 0x28, 0x87, 0x7E, 0xC4, 0x81]

    public static func hex(_ uuid: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        return String(uuid.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0xF)]] })
    }
}
