// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// `iref`: typed links between items (`dimg` derivation inputs, `thmb` thumbnails, `auxl` auxiliary images,
/// `cdsc` metadata describing an image, `base`, `prem`, ...).
struct ItemReferenceBox: Sendable, Equatable {
    struct Reference: Sendable, Equatable {
        var type: FourCC
        var from: UInt32
        var to: [UInt32]
    }

    static let derivedImage: FourCC = "dimg"
    static let thumbnail: FourCC = "thmb"
    static let auxiliary: FourCC = "auxl"
    static let describes: FourCC = "cdsc"

    var version: UInt8
    var references: [Reference]

    static func parse(_ box: Box, reader: BoxReader) throws -> ItemReferenceBox {
        let (version, _) = try reader.fullBoxHeader(of: box)
        guard version <= 1 else {
            throw MetascrubError.malformed(format: reader.format, path: box.path, offset: box.offset, reason: "item reference version \(version) is not defined")
        }
        var references: [Reference] = []
        for child in try reader.children(of: box, skip: 4, depth: 2).boxes {
            var c = ByteCursor(try reader.payload(of: child), origin: child.payloadOffset, format: reader.format, path: child.path)
            let from = version == 0 ? UInt32(try c.u16("from_item_ID")) : try c.u32("from_item_ID")
            let count = Int(try c.u16("reference_count"))
            guard count * (version == 0 ? 2 : 4) <= c.remaining else { throw c.malformed("reference_count \(count) runs past the box") }
            var to: [UInt32] = []
            to.reserveCapacity(count)
            for _ in 0..<count { to.append(version == 0 ? UInt32(try c.u16("to_item_ID")) : try c.u32("to_item_ID")) }
            references.append(Reference(type: child.type, from: from, to: to))
        }
        return ItemReferenceBox(version: version, references: references)
    }


    /// nil when no reference is left.
    func serialize() -> [UInt8]? {
        guard !references.isEmpty else { return nil }
        let wide = version == 1 || references.contains { $0.from > 0xFFFF || $0.to.contains { $0 > 0xFFFF } }
        var children: [[UInt8]] = []
        for r in references {
            var w = ByteWriter()
            if wide { w.u32(r.from) } else { w.u16(UInt16(r.from)) }
            w.u16(UInt16(r.to.count))
            for id in r.to { if wide { w.u32(id) } else { w.u16(UInt16(id)) } }
            children.append(BoxWriter.box(r.type, w.bytes))
        }
        var fields = ByteWriter()
        fields.fullBoxHeader(version: wide ? 1 : 0, flags: 0)
        return BoxWriter.container("iref", fields: fields.bytes, children: children)
    }
}

/// References indexed both ways, so following them costs a lookup (files may hold thousands of tiles).
struct ReferenceIndex: Sendable {
    private var targetsOf: [FourCC: [UInt32: [UInt32]]] = [:]
    private var sourcesOf: [FourCC: [UInt32: [UInt32]]] = [:]

    init(_ box: ItemReferenceBox) {
        for r in box.references {
            targetsOf[r.type, default: [:]][r.from, default: []] += r.to
            for to in r.to { sourcesOf[r.type, default: [:]][to, default: []].append(r.from) }
        }
    }

    /// The targets of `from`'s references of `type`, in order (for `dimg`: the tile order).
    func targets(of from: UInt32, _ type: FourCC) -> [UInt32] { targetsOf[type]?[from] ?? [] }

    /// Items referring to `to` with a reference of `type`.
    func sources(of to: UInt32, _ type: FourCC) -> [UInt32] { sourcesOf[type]?[to] ?? [] }

    /// Items `id` refers to, and items referring to `id`, by any reference type.
    func neighbours(of id: UInt32) -> [UInt32] {
        targetsOf.values.flatMap { $0[id] ?? [] } + sourcesOf.values.flatMap { $0[id] ?? [] }
    }
}
