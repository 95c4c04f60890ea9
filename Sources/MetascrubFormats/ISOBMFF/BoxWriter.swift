// SPDX-License-Identifier: GPL-3.0-or-later

/// Serialises boxes. Sizes are always explicit: a 32-bit size when it fits, a 64-bit `largesize` otherwise
/// (or when the original used one, so a rewritten `mdat` keeps its header form).
public enum BoxWriter {
    /// The header of a box of type `type` whose payload (after the extended type) is `payloadSize` bytes.
    public static func header(_ type: FourCC, payloadSize: Int64, extendedType: [UInt8]? = nil, preferLarge: Bool = false) -> [UInt8] {
        let extra = Int64(extendedType?.count ?? 0)
        var w = ByteWriter()
        if !preferLarge, payloadSize + extra + 8 <= Int64(UInt32.max) {
            w.u32(UInt32(payloadSize + extra + 8))
            w.fourCC(type)
        } else {
            w.u32(1)
            w.fourCC(type)
            w.u64(UInt64(payloadSize + extra + 16))
        }
        if let extendedType { w.append(extendedType) }
        return w.bytes
    }

    public static func headerSize(payloadSize: Int64, extendedType: [UInt8]? = nil, preferLarge: Bool = false) -> Int {
        let extra = extendedType?.count ?? 0
        return (!preferLarge && payloadSize + Int64(extra) + 8 <= Int64(UInt32.max) ? 8 : 16) + extra
    }

    public static func box(_ type: FourCC, _ payload: [UInt8], extendedType: [UInt8]? = nil) -> [UInt8] {
        header(type, payloadSize: Int64(payload.count), extendedType: extendedType) + payload
    }

    public static func fullBox(_ type: FourCC, version: UInt8, flags: UInt32, _ payload: [UInt8]) -> [UInt8] {
        var w = ByteWriter()
        w.fullBoxHeader(version: version, flags: flags)
        w.append(payload)
        return box(type, w.bytes)
    }

    /// A box whose children are given as whole boxes, after `fields` (e.g. version and flags of a full box).
    public static func container(_ type: FourCC, fields: [UInt8] = [], children: [[UInt8]]) -> [UInt8] {
        box(type, fields + children.flatMap { $0 })
    }
}
