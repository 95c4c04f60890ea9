// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// Nikon enciphers the ColorBalance (0x0097), LensData (0x0098) and ShotInfo (0x0091) blocks of its maker note
/// with a key taken from two other entries: the serial number (0x001D; its value modulo 256 when it is all
/// digits, a constant chosen by the model otherwise) and the shutter count (0x00A7; its four bytes XORed). LibRaw
/// reads white balance through it, ExifTool and exiv2 the lens and shot data. Normally both entries are cleared
/// and the blocks re-enciphered (`NikonRecipher`). Where a block is of a version whose enciphering no reader's
/// table lists, re-enciphering could corrupt it, so both entries are instead replaced by the smallest values with
/// the same key: every block deciphers exactly as before with nothing re-enciphered, and what remains of each is
/// the 8 bits of key material, not the serial or the count.
enum NikonKey {
    static let serialTag: UInt16 = 0x001D
    static let shutterCountTag: UInt16 = 0x00A7

    /// The key-equivalent bytes of `value` for a key entry, nil for any other tag (or a value of another shape).
    static func replacement(tag: UInt16, value: [UInt8], order: ByteOrder) -> [UInt8]? {
        switch tag {
        case serialTag:
            let text = value.prefix { $0 != 0 }
            guard !text.isEmpty else { return nil }
            let digit = { (c: UInt8) in (0x30...0x39).contains(c) }
            var kept: [UInt8]
            if text.allSatisfy(digit) {
                // The key uses the number's low byte; its decimal form keeps it (at most 3 digits, the serial has
                // at least as many unless it has leading zeros, which the shorter form drops).
                kept = Array(String(NikonCipher.serialKey(Array(text), model: "")).utf8)
            } else {
                // Any non-digit makes readers take the model's constant: one non-digit does the same.
                kept = Array("-".utf8)
            }
            guard kept.count <= value.count else { return nil }
            return kept + [UInt8](repeating: 0, count: value.count - kept.count)
        case shutterCountTag:
            guard value.count == 4 else { return nil }
            let key = NikonCipher.countKey(value)
            // The four bytes still XOR to the key; read as a number, it is the key.
            return order == .little ? [key, 0, 0, 0] : [0, 0, 0, key]
        default:
            return nil
        }
    }
}
