// SPDX-License-Identifier: GPL-3.0-or-later

/// UTF-16 text inside a payload, in whatever script, made searchable by the byte-level `LocationShapes`. A position
/// written in Japanese or Russian text is mostly non-zero bytes, so a share of zero bytes cannot tell UTF-16 apart:
/// what every position has is ASCII digits, and those are code units with a zero high byte in either byte order.
enum UTF16Text {
    /// A byte-order mark at the start, a third of the bytes zero (mostly-ASCII text), or two ASCII digits in a row as
    /// UTF-16 code units (`4\0 8\0` little-endian, `\04\08` big-endian: the same pattern one byte apart).
    static func mayHold(_ b: [UInt8]) -> Bool {
        guard b.count >= 8 else { return false }
        if (b[0] == 0xFF && b[1] == 0xFE) || (b[0] == 0xFE && b[1] == 0xFF) { return true }
        var zeros = 0
        var i = 0
        while i + 3 < b.count {
            if b[i] == 0 { zeros += 1 }
            if b[i + 1] == 0, b[i + 3] == 0, isDigit(b[i]), isDigit(b[i + 2]) { return true }
            i += 1
        }
        return zeros * 3 >= b.count
    }

    /// The payload as one byte per 16-bit unit from `phase`, in one byte order: an ASCII or Latin-1 unit is its low
    /// byte; `′` is an apostrophe; any other character is 0x01, which no shape takes as a letter, digit or space, so
    /// words in another script separate numbers as they do on screen. Output position k is payload `phase + 2k`.
    static func narrowed(_ b: [UInt8], phase: Int, bigEndian: Bool) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(b.count / 2)
        var i = phase
        while i + 1 < b.count {
            let low = bigEndian ? b[i + 1] : b[i], high = bigEndian ? b[i] : b[i + 1]
            if high == 0 { out.append(low) }
            else if high == 0x20, low == 0x32 { out.append(0x27) }
            else { out.append(0x01) }
            i += 2
        }
        return out
    }

    private static func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }
}
