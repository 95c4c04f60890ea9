// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// The enciphered blocks of one Nikon maker note and the two entries their key comes from. Removing the serial
/// number or the shutter count changes the key, so the clean re-enciphers every block with the new key: each
/// deciphers to exactly the bytes it did (LibRaw's white balance, ExifTool's lens and shot data), while the
/// removed entries hold "0" and 0, which say nothing.
struct NikonRecipher: Sendable {
    struct Block: Sendable {
        /// The block's value in the file.
        var value: Range<Int64>
        /// Where the enciphered run starts inside it (the stream starts there).
        var start: Int
        var enciphered: Range<Int64> { value.lowerBound + Int64(start)..<value.upperBound }
    }

    var serialItem: Int?
    var countItem: Int?
    var serialKey: UInt8
    var countKey: UInt8
    var blocks: [Block]

    /// What a removed key entry holds: the serial number "0", which every reader takes as key 0 (an empty one
    /// is key 0 to LibRaw but the model's constant to ExifTool), the shutter count 0; nil for other tags.
    static func cleared(tag: UInt16, length: Int) -> [UInt8]? {
        switch tag {
        case NikonKey.serialTag where length >= 1: [0x30] + [UInt8](repeating: 0, count: length - 1)
        case NikonKey.shutterCountTag: [UInt8](repeating: 0, count: length)
        default: nil
        }
    }

    /// The maker note's recipher, or nil when one of its blocks is of a version whose enciphering is not known
    /// (the key entries then get key-equivalent values, `NikonKey`, and nothing is re-enciphered).
    static func locate(_ source: any ByteSource, entries: [MakerNoteIFD.Entry], model: String) throws -> NikonRecipher? {
        guard let serial = entries.first(where: { $0.tag == NikonKey.serialTag }),
              let count = entries.first(where: { $0.tag == NikonKey.shutterCountTag }), count.value.count == 4 else { return nil }
        var blocks: [Block] = []
        for entry in entries {
            let head = try source.read(at: entry.value.lowerBound, count: Int(min(entry.value.count, 4)))
            switch NikonCipher.enciphering(tag: entry.tag, version: head, length: Int64(entry.value.count)) {
            case nil, .plain?: continue
            case .unknown?: return nil
            case .from(let start)?:
                if Int64(start) < entry.value.count { blocks.append(Block(value: entry.value, start: start)) }
            }
        }
        return NikonRecipher(serialItem: nil, countItem: nil,
                             serialKey: NikonCipher.serialKey(try source.read(at: serial.value.lowerBound, count: Int(serial.value.count)), model: model),
                             countKey: NikonCipher.countKey(try source.read(at: count.value.lowerBound, count: 4)), blocks: blocks)
    }

    /// The key after a clean that removes what `removes` says.
    func newKey(removes: (Int) -> Bool) -> (serial: UInt8, count: UInt8) {
        (serialItem.map(removes) == true ? 0 : serialKey, countItem.map(removes) == true ? 0 : countKey)
    }

    /// Re-enciphers every block under the new key, over whatever the other patches already wrote inside it.
    func apply(removes: (Int) -> Bool, source: any ByteSource, to patches: inout InPlacePatches) throws {
        let key = newKey(removes: removes)
        guard key != (serialKey, countKey) else { return }
        for block in blocks {
            let length = Int(block.enciphered.count)
            let old = NikonCipher.keystream(serialKey: serialKey, countKey: countKey, length: length)
            let new = NikonCipher.keystream(serialKey: key.serial, countKey: key.count, length: length)
            var bytes = try patches.patched(source, block.enciphered)
            for i in 0..<length { bytes[i] ^= old[i] ^ new[i] }
            patches.replace(block.enciphered, with: bytes)
        }
    }

    func shifted(by base: Int64, items: Int) -> NikonRecipher {
        var moved = self
        moved.serialItem = serialItem.map { $0 + items }
        moved.countItem = countItem.map { $0 + items }
        moved.blocks = blocks.map { Block(value: $0.value.lowerBound + base..<$0.value.upperBound + base, start: $0.start) }
        return moved
    }
}
