// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// `iloc`: where each item's bytes are. Versions 0, 1 and 2; offset, length, base-offset and index fields of
/// 0, 4 or 8 bytes; construction methods 0 (file offsets), 1 (offsets into `idat`) and 2 (into another item).
struct ItemLocationBox: Sendable, Equatable {
    struct Extent: Sendable, Equatable {
        var index, offset, length: UInt64
    }

    struct Entry: Sendable, Equatable {
        var itemID: UInt32
        var constructionMethod: UInt8
        var dataReferenceIndex: UInt16
        var baseOffset: UInt64
        var extents: [Extent]
    }

    var version: UInt8
    /// Field widths in bytes (0, 4 or 8).
    var offsetSize, lengthSize, baseOffsetSize, indexSize: Int
    var entries: [Entry]

    static let maxExtents = 1 << 20

    static func parse(_ payload: [UInt8], box: Box, format: String) throws -> ItemLocationBox {
        var c = ByteCursor(payload, origin: box.payloadOffset, format: format, path: box.path)
        let (version, _) = try c.fullBoxHeader()
        guard version <= 2 else { throw c.malformed("item location version \(version) is not defined") }
        let sizes = try c.u8("offset_size/length_size")
        let sizes2 = try c.u8("base_offset_size/index_size")
        let offsetSize = Int(sizes >> 4), lengthSize = Int(sizes & 0xF), baseOffsetSize = Int(sizes2 >> 4)
        let indexSize = version >= 1 ? Int(sizes2 & 0xF) : 0
        for (name, size) in [("offset_size", offsetSize), ("length_size", lengthSize), ("base_offset_size", baseOffsetSize), ("index_size", indexSize)]
        where ![0, 4, 8].contains(size) {
            throw c.malformed("\(name) \(size) is not 0, 4 or 8")
        }
        let count = version < 2 ? Int(try c.u16("item_count")) : Int(try c.u32("item_count"))
        // Each entry takes at least 6 bytes: a hostile count must not make us reserve memory.
        guard count <= c.remaining / 6 + 1 else { throw c.malformed("item_count \(count) does not fit in the box") }
        var entries: [Entry] = []
        var seen = Set<UInt32>()
        var totalExtents = 0
        for _ in 0..<count {
            let id = version < 2 ? UInt32(try c.u16("item_ID")) : try c.u32("item_ID")
            let method = version >= 1 ? UInt8(try c.u16("construction_method") & 0xF) : 0
            guard method <= 2 else { throw c.malformed("item \(id) has construction method \(method)") }
            let dref = try c.u16("data_reference_index")
            let base = try c.uint(size: baseOffsetSize, "base_offset")
            let extentCount = Int(try c.u16("extent_count"))
            let extentSize = indexSize + offsetSize + lengthSize
            guard extentSize == 0 || extentCount <= c.remaining / extentSize else { throw c.malformed("item \(id) extents run past the box") }
            // With all field sizes 0 extents take no bytes: bound them so a small box cannot ask for billions.
            totalExtents += extentCount
            guard totalExtents <= maxExtents else {
                throw MetascrubError.limitExceeded(format: format, path: box.path, offset: box.offset, limit: "\(maxExtents) extents")
            }
            var extents: [Extent] = []
            extents.reserveCapacity(extentCount)
            for _ in 0..<extentCount {
                let index = try c.uint(size: indexSize, "extent_index")
                let offset = try c.uint(size: offsetSize, "extent_offset")
                let length = try c.uint(size: lengthSize, "extent_length")
                extents.append(Extent(index: index, offset: offset, length: length))
            }
            guard seen.insert(id).inserted else { throw c.malformed("item \(id) is located twice") }
            entries.append(Entry(itemID: id, constructionMethod: method, dataReferenceIndex: dref, baseOffset: base, extents: extents))
        }
        return ItemLocationBox(version: version, offsetSize: offsetSize, lengthSize: lengthSize, baseOffsetSize: baseOffsetSize,
                               indexSize: indexSize, entries: entries)
    }

    /// Field sizes wide enough for every value (widened from the original's, never narrowed), with the version
    /// raised when item IDs or the count need 32 bits or a construction method needs recording.
    func fitted() -> ItemLocationBox {
        var out = self
        func widen(_ size: Int, _ values: [UInt64]) -> Int {
            guard let top = values.max(), !ByteWriter.fits(top, size: size) else { return size }
            return ByteWriter.fits(top, size: 4) ? 4 : 8
        }
        out.offsetSize = widen(offsetSize, entries.flatMap { $0.extents.map(\.offset) })
        out.lengthSize = widen(lengthSize, entries.flatMap { $0.extents.map(\.length) })
        out.baseOffsetSize = widen(baseOffsetSize, entries.map(\.baseOffset))
        out.indexSize = widen(indexSize, entries.flatMap { $0.extents.map(\.index) })
        if out.indexSize > 0 || entries.contains(where: { $0.constructionMethod != 0 }) { out.version = max(out.version, 1) }
        if entries.count > 0xFFFF || entries.contains(where: { $0.itemID > 0xFFFF }) { out.version = 2 }
        return out
    }

    /// The whole box. Call on a `fitted()` value.
    func serialize() -> [UInt8] {
        var w = ByteWriter()
        w.fullBoxHeader(version: version, flags: 0)
        w.u8(UInt8(offsetSize << 4 | lengthSize))
        w.u8(UInt8(baseOffsetSize << 4 | (version >= 1 ? indexSize : 0)))
        if version < 2 { w.u16(UInt16(entries.count)) } else { w.u32(UInt32(entries.count)) }
        for e in entries {
            if version < 2 { w.u16(UInt16(e.itemID)) } else { w.u32(e.itemID) }
            if version >= 1 { w.u16(UInt16(e.constructionMethod)) }
            w.u16(e.dataReferenceIndex)
            w.uint(e.baseOffset, size: baseOffsetSize)
            w.u16(UInt16(e.extents.count))
            for x in e.extents {
                if version >= 1 { w.uint(x.index, size: indexSize) }
                w.uint(x.offset, size: offsetSize)
                w.uint(x.length, size: lengthSize)
            }
        }
        return BoxWriter.box("iloc", w.bytes)
    }
}
