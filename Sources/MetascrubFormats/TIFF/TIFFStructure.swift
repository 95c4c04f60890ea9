// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// A TIFF or BigTIFF file's header and image file directories (TIFF 6.0 §2, BigTIFF): every entry's value
/// located and bounds-checked, IFD loops refused, counts limited. Values are read on demand.
struct TIFFStructure {
    static let maxEntries = 4096
    static let maxIFDs = 4096

    struct Entry {
        var tag: UInt16
        var type: UInt16
        var count: UInt64
        /// File offset of the value (inside the entry when it fits there).
        var valueOffset: Int64
        var byteCount: Int64
    }

    struct IFD {
        var offset: Int64
        var entries: [Entry]
        /// Offset of the next IFD in the chain, 0 for none.
        var next: Int64

        func entry(_ tag: UInt16) -> Entry? { entries.first { $0.tag == tag } }
    }

    var order: ByteOrder
    var isBig: Bool
    var fileSize: Int64
    var firstIFD: Int64

    var headerSize: Int64 { isBig ? 16 : 8 }
    var entrySize: Int64 { isBig ? 20 : 12 }
    /// Bytes a value may take inside its entry.
    var inlineCapacity: Int64 { isBig ? 8 : 4 }
    var format: String { isBig ? "BigTIFF" : "TIFF" }

    static func typeSize(_ type: UInt16) -> Int64? {
        switch type {
        case 1, 2, 6, 7: 1
        case 3, 8: 2
        case 4, 9, 11, 13: 4
        case 5, 10, 12, 16, 17, 18: 8
        default: nil
        }
    }

    /// The byte order a TIFF header's first two bytes name ("II" or "MM").
    static func byteOrder(_ head: [UInt8], format: String) throws -> ByteOrder {
        switch (head[0], head[1]) {
        case (0x49, 0x49): .little
        case (0x4D, 0x4D): .big
        default: throw MetascrubError.malformed(format: format, path: "header", offset: 0, reason: "no byte-order mark")
        }
    }

    static func header(_ source: any ByteSource) throws -> TIFFStructure {
        let head = try source.read(at: 0, count: 8, format: "TIFF", path: "header")
        let order = try byteOrder(head, format: "TIFF")
        switch order.u16(head, 2) {
        case 42:
            return TIFFStructure(order: order, isBig: false, fileSize: source.size, firstIFD: Int64(order.u32(head, 4)))
        case 43:
            let big = try source.read(at: 0, count: 16, format: "BigTIFF", path: "header")
            guard order.u16(big, 4) == 8, order.u16(big, 6) == 0 else {
                throw MetascrubError.malformed(format: "BigTIFF", path: "header", offset: 4, reason: "offset size is not 8")
            }
            return TIFFStructure(order: order, isBig: true, fileSize: source.size, firstIFD: Int64(bitPattern: u64(order, big, 8)))
        default:
            throw MetascrubError.malformed(format: "TIFF", path: "header", offset: 2, reason: "version is neither 42 (TIFF) nor 43 (BigTIFF)")
        }
    }

    static func u64(_ order: ByteOrder, _ b: [UInt8], _ o: Int) -> UInt64 {
        let first = UInt64(order.u32(b, o)), second = UInt64(order.u32(b, o + 4))
        return order.bigEndian ? first << 32 | second : second << 32 | first
    }

    func bytes64(_ v: UInt64) -> [UInt8] {
        let low = order.bytes(UInt32(truncatingIfNeeded: v)), high = order.bytes(UInt32(truncatingIfNeeded: v >> 32))
        return order.bigEndian ? high + low : low + high
    }

    /// An offset-sized value (4 bytes in TIFF, 8 in BigTIFF) in the file's byte order.
    func offsetBytes(_ v: Int64) -> [UInt8] { isBig ? bytes64(UInt64(v)) : order.bytes(UInt32(truncatingIfNeeded: v)) }

    /// Reads one IFD. `visited` refuses loops across the whole file.
    func readIFD(_ source: any ByteSource, at offset: Int64, path: String, visited: inout Set<Int64>, notes: inout [Note]) throws -> IFD {
        guard visited.count < Self.maxIFDs else {
            throw MetascrubError.limitExceeded(format: format, path: path, offset: offset, limit: "\(Self.maxIFDs) IFDs")
        }
        guard offset >= headerSize, offset < fileSize else {
            throw MetascrubError.truncated(format: format, path: path, offset: offset, needed: max(1, offset - fileSize + 1))
        }
        guard visited.insert(offset).inserted else {
            throw MetascrubError.malformed(format: format, path: path, offset: offset, reason: "IFD offset loops back to an IFD already read")
        }
        let countBytes = try source.read(at: offset, count: isBig ? 8 : 2, format: format, path: "\(path) entry count")
        let count = isBig ? Int64(clamping: Self.u64(order, countBytes, 0)) : Int64(order.u16(countBytes, 0))
        guard count <= Int64(Self.maxEntries) else {
            throw MetascrubError.limitExceeded(format: format, path: path, offset: offset, limit: "\(Self.maxEntries) entries per IFD")
        }
        let tableStart = offset + (isBig ? 8 : 2)
        let table = try source.read(at: tableStart, count: Int(count * entrySize + inlineCapacity), format: format, path: "\(path) entries")
        var entries: [Entry] = []
        for i in 0..<Int(count) {
            let e = i * Int(entrySize)
            let tag = order.u16(table, e), type = order.u16(table, e + 2)
            let n = isBig ? Self.u64(order, table, e + 4) : UInt64(order.u32(table, e + 4))
            let fieldAt = e + (isBig ? 12 : 8)
            guard let unit = Self.typeSize(type) else {
                notes.append(Note(.warning, code: "tiff-bad-type", "\(path) tag \(String(format4hex: tag)) has unknown type \(type); dropped",
                                  offset: tableStart + Int64(e)))
                continue
            }
            guard n <= UInt64(fileSize), Int64(n) * unit <= fileSize else {
                throw MetascrubError.malformed(format: format, path: "\(path)/\(String(format4hex: tag))", offset: tableStart + Int64(e),
                                               reason: "value of \(n) items is larger than the file")
            }
            let byteCount = Int64(n) * unit
            let valueOffset = byteCount <= inlineCapacity ? tableStart + Int64(fieldAt)
                : (isBig ? Int64(clamping: Self.u64(order, table, fieldAt)) : Int64(order.u32(table, fieldAt)))
            // Subtracting, not adding: a BigTIFF offset can be near 2^63 (byteCount ≤ fileSize was checked above).
            guard valueOffset >= 0, valueOffset <= fileSize - byteCount else {
                let past = (valueOffset - fileSize).addingReportingOverflow(byteCount)
                throw MetascrubError.truncated(format: format, path: "\(path)/\(String(format4hex: tag))", offset: valueOffset,
                                               needed: past.overflow ? Int64.max : past.partialValue)
            }
            entries.append(Entry(tag: tag, type: type, count: n, valueOffset: valueOffset, byteCount: byteCount))
        }
        let nextAt = Int(count * entrySize)
        let next = isBig ? Int64(clamping: Self.u64(order, table, nextAt)) : Int64(order.u32(table, nextAt))
        return IFD(offset: offset, entries: entries, next: next)
    }

    func bytes(_ source: any ByteSource, _ entry: Entry) throws -> [UInt8] {
        try source.read(at: entry.valueOffset, count: Int(entry.byteCount), format: format, path: "tag \(String(format4hex: entry.tag))")
    }

    /// Unsigned integer values (BYTE, SHORT, LONG, LONG8, IFD, IFD8); nil for other types.
    func integers(_ source: any ByteSource, _ entry: Entry) throws -> [UInt64]? {
        let b = try bytes(source, entry)
        switch entry.type {
        case 1: return b.map { UInt64($0) }
        case 3: return (0..<Int(entry.count)).map { UInt64(order.u16(b, $0 * 2)) }
        case 4, 13: return (0..<Int(entry.count)).map { UInt64(order.u32(b, $0 * 4)) }
        case 16, 18: return (0..<Int(entry.count)).map { Self.u64(order, b, $0 * 8) }
        default: return nil
        }
    }

    func integer(_ source: any ByteSource, _ ifd: IFD, _ tag: UInt16) throws -> UInt64? {
        guard let entry = ifd.entry(tag), entry.count >= 1 else { return nil }
        return try integers(source, entry)?.first
    }
}
