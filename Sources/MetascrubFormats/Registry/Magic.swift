// SPDX-License-Identifier: GPL-3.0-or-later

/// Magic-byte tests over the first bytes of a file. Detection never looks at the file name.
public enum Magic {
    /// How many leading bytes detection reads.
    public static let headLength = 512

    public static func starts(_ head: [UInt8], _ prefix: [UInt8], at offset: Int = 0) -> Bool {
        head.count >= offset + prefix.count && Array(head[offset..<offset + prefix.count]) == prefix
    }

    public static func ascii(_ head: [UInt8], _ text: String, at offset: Int = 0) -> Bool {
        starts(head, Array(text.utf8), at: offset)
    }

    /// The major brand and compatible brands of an ISOBMFF `ftyp` box at the start, if there is one.
    public static func isobmffBrands(_ head: [UInt8]) -> [String]? {
        guard head.count >= 16, ascii(head, "ftyp", at: 4) else { return nil }
        let size = Int(head[0]) << 24 | Int(head[1]) << 16 | Int(head[2]) << 8 | Int(head[3])
        guard size >= 16 else { return nil }
        var brands = [String(decoding: head[8..<12], as: UTF8.self)]
        var offset = 16
        while offset + 4 <= min(size, head.count) {
            brands.append(String(decoding: head[offset..<offset + 4], as: UTF8.self))
            offset += 4
        }
        return brands
    }

    public static func isRIFF(_ head: [UInt8], form: String) -> Bool {
        ascii(head, "RIFF") && ascii(head, form, at: 8)
    }

    public static func isTIFF(_ head: [UInt8]) -> Bool {
        starts(head, [0x49, 0x49, 0x2A, 0x00]) || starts(head, [0x4D, 0x4D, 0x00, 0x2A])
            || starts(head, [0x49, 0x49, 0x2B, 0x00]) || starts(head, [0x4D, 0x4D, 0x00, 0x2B])
    }

    /// The tags of a classic TIFF's IFD0 when its whole entry table lies in `head`; nil otherwise.
    public static func tiffIFD0Tags(_ head: [UInt8]) -> [UInt16]? {
        guard head.count >= 8, starts(head, [0x49, 0x49, 0x2A, 0x00]) || starts(head, [0x4D, 0x4D, 0x00, 0x2A]) else { return nil }
        let order: ByteOrder = head[0] == 0x49 ? .little : .big
        let at = Int(order.u32(head, 4))
        guard at >= 8, at + 2 <= head.count else { return nil }
        let count = Int(order.u16(head, at))
        guard at + 2 + count * 12 <= head.count else { return nil }
        return (0..<count).map { order.u16(head, at + 2 + $0 * 12) }
    }

    /// MPEG transport streams: sync bytes every 188 bytes, or every 192 with the 4-byte M2TS prefix.
    public static func isMPEGTS(_ head: [UInt8]) -> Bool {
        (head.count > 376 && head[0] == 0x47 && head[188] == 0x47 && head[376] == 0x47)
            || (head.count > 388 && head[4] == 0x47 && head[196] == 0x47 && head[388] == 0x47)
    }
}
