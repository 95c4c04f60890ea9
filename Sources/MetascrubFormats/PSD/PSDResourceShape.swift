// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// Whether a document resource (copied as structure) is exactly as long as its fields: a resource with bytes after
/// its last field, or a path resource whose records are no path records, carries something no reader reads and is
/// an `unknown` item instead. Resources whose layout is not checked here (alpha channel names, layer comps, the
/// clipping path name) stay as they are.
enum PSDResourceShape {
    /// Bytes in one path record; every record starts with its selector (0…8).
    static let pathRecord = 26

    static func isExact(_ id: UInt16, _ data: [UInt8]) -> Bool {
        let size = data.count
        func u32(_ at: Int) -> Int { size >= at + 4 ? Int(ByteOrder.big.u32(data, at)) : -1 }
        switch id {
        case 0x03ED: return size == 16  // resolution: h/v resolution, units, width units
        case 0x0400, 0x0416, 0x0417: return size == 2  // target layer, indexed colour count, transparent index
        case 0x0402: return size % 2 == 0  // one layer group id per layer
        case 0x0408: return size >= 16 && size == 16 + 5 * u32(12)  // grid, then one guide (5 bytes) per count
        case 0x0414: return size == 4  // document id seed
        case 0x041D: return size % 4 == 0  // one alpha identifier per channel
        case 0x0428: return size == 12  // pixel aspect ratio: version and a double
        case 0x042D: return size >= 2 && size == 2 + 4 * Int(ByteOrder.big.u16(data, 0))  // selected layer ids
        case 0x07D0...0x0BB6:
            return size % pathRecord == 0
                && stride(from: 0, to: size, by: pathRecord).allSatisfy { ByteOrder.big.u16(data, $0) <= 8 }
        default: return true
        }
    }
}
