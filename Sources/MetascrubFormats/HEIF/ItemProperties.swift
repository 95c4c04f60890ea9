// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// `ipma`: which properties of `ipco` (1-based indices) each item or entity group has, in order.
struct ItemPropertyAssociationBox: Sendable, Equatable {
    struct Association: Sendable, Equatable {
        /// 1-based index into the `ipco` children; 0 means "no property".
        var index: Int
        var essential: Bool
    }

    struct Entry: Sendable, Equatable {
        var id: UInt32
        var associations: [Association]
    }

    var version: UInt8
    var flags: UInt32
    var entries: [Entry]

    static func parse(_ payload: [UInt8], box: Box, format: String) throws -> ItemPropertyAssociationBox {
        var c = ByteCursor(payload, origin: box.payloadOffset, format: format, path: box.path)
        let (version, flags) = try c.fullBoxHeader()
        let count = Int(try c.u32("entry_count"))
        guard count <= c.remaining / 3 + 1 else { throw c.malformed("entry_count \(count) does not fit in the box") }
        var entries: [Entry] = []
        for _ in 0..<count {
            let id = version < 1 ? UInt32(try c.u16("item_ID")) : try c.u32("item_ID")
            let n = Int(try c.u8("association_count"))
            var associations: [Association] = []
            for _ in 0..<n {
                if flags & 1 != 0 {
                    let v = try c.u16("property_index")
                    associations.append(Association(index: Int(v & 0x7FFF), essential: v & 0x8000 != 0))
                } else {
                    let v = try c.u8("property_index")
                    associations.append(Association(index: Int(v & 0x7F), essential: v & 0x80 != 0))
                }
            }
            entries.append(Entry(id: id, associations: associations))
        }
        return ItemPropertyAssociationBox(version: version, flags: flags, entries: entries)
    }

    func serialize() -> [UInt8] {
        let wideIDs = version >= 1 || entries.contains { $0.id > 0xFFFF }
        let wideIndex = flags & 1 != 0 || entries.contains { $0.associations.contains { $0.index > 0x7F } }
        var w = ByteWriter()
        w.fullBoxHeader(version: wideIDs ? 1 : 0, flags: wideIndex ? flags | 1 : flags & ~1)
        w.u32(UInt32(entries.count))
        for e in entries {
            if wideIDs { w.u32(e.id) } else { w.u16(UInt16(e.id)) }
            w.u8(UInt8(e.associations.count))
            for a in e.associations {
                if wideIndex { w.u16(UInt16(a.index) | (a.essential ? 0x8000 : 0)) } else { w.u8(UInt8(a.index) | (a.essential ? 0x80 : 0)) }
            }
        }
        return BoxWriter.box("ipma", w.bytes)
    }
}

/// `grpl`: entity groups (`altr` alternatives, bursts, stereo pairs) listing item IDs.
struct EntityGroup: Sendable, Equatable {
    var box: Box
    var version: UInt8
    var flags, groupID: UInt32
    var entities: [UInt32]
    /// Group-type-specific fields after the entity list, copied as they are.
    var rest: [UInt8]

    static func parse(_ box: Box, reader: BoxReader) throws -> EntityGroup {
        var c = ByteCursor(try reader.payload(of: box), origin: box.payloadOffset, format: reader.format, path: box.path)
        let (version, flags) = try c.fullBoxHeader()
        let group = try c.u32("group_id")
        let count = Int(try c.u32("num_entities_in_group"))
        guard count <= c.remaining / 4 else { throw c.malformed("num_entities_in_group \(count) runs past the box") }
        var entities: [UInt32] = []
        for _ in 0..<count { entities.append(try c.u32("entity_id")) }
        return EntityGroup(box: box, version: version, flags: flags, groupID: group, entities: entities, rest: try c.take(c.remaining))
    }

    func serialize() -> [UInt8] {
        var w = ByteWriter()
        w.fullBoxHeader(version: version, flags: flags)
        w.u32(groupID)
        w.u32(UInt32(entities.count))
        for e in entities { w.u32(e) }
        w.append(rest)
        return BoxWriter.box(box.type, w.bytes)
    }
}
