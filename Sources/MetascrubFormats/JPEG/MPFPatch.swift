// SPDX-License-Identifier: GPL-3.0-or-later

/// Rewrites the MP entries of a kept MPF index after the file around it changed size: entry offsets are
/// relative to the MPF header, and the first entry's size is the primary image's.
enum MPFPatch {
    static func relocate(_ segment: [UInt8], oldHeaderAt: Int64, newHeaderAt: Int64, primarySize: Int64,
                         moves: [(old: Range<Int64>, new: Int64)]) -> [UInt8] {
        var out = segment
        let base = 8 // FF E2, length, "MPF\0"
        guard out.count >= base + 8 else { return out }
        let order: ByteOrder = out[base] == 0x4D ? .big : .little
        let ifd = base + Int(order.u32(out, base + 4))
        guard ifd + 2 <= out.count else { return out }
        let count = Int(order.u16(out, ifd))
        for i in 0..<count where ifd + 2 + i * 12 + 12 <= out.count {
            let e = ifd + 2 + i * 12
            guard order.u16(out, e) == 0xB002 else { continue }
            let n = Int(order.u32(out, e + 4)), at = base + Int(order.u32(out, e + 8))
            guard at + n <= out.count else { return out }
            for (k, entry) in stride(from: at, to: at + n, by: 16).enumerated() {
                if k == 0 {
                    out.replaceSubrange(entry + 4..<entry + 8, with: order.bytes(UInt32(truncatingIfNeeded: primarySize)))
                    continue
                }
                let oldAbs = oldHeaderAt + Int64(order.u32(out, entry + 8))
                guard let move = moves.first(where: { $0.old.contains(oldAbs) }) else { continue }
                let newAbs = move.new + (oldAbs - move.old.lowerBound)
                out.replaceSubrange(entry + 8..<entry + 12, with: order.bytes(UInt32(truncatingIfNeeded: newAbs - newHeaderAt)))
            }
        }
        return out
    }
}
