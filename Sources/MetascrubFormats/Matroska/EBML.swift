// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// One EBML element header (RFC 8794): a variable-length ID and a variable-length data size.
struct EBMLElement {
    var id: UInt32
    /// Offset of the ID.
    var offset: Int64
    var headerSize: Int
    /// nil: unknown size (live streams), resolved by the reader from the parent's end or the next sibling.
    var size: Int64?
    /// End of the element (for unknown sizes, as resolved).
    var end: Int64
    /// The file ends before the element does (accepted only for the Segment and its last Cluster).
    var cut = false

    var dataOffset: Int64 { offset + Int64(headerSize) }
    var range: Range<Int64> { offset..<end }
    var data: Range<Int64> { dataOffset..<end }
    var dataSize: Int64 { end - dataOffset }
}

enum EBML {
    static let format = "Matroska"
    static let maxElements = 1 << 22
    static let maxDepth = 16

    /// Reads the element header at `offset`; its data must end by `limit`.
    static func header(_ source: any ByteSource, at offset: Int64, limit: Int64, path: String, allowCut: Bool = false) throws -> EBMLElement {
        guard offset < limit else { throw MetascrubError.truncated(format: format, path: path, offset: offset, needed: 2) }
        let head = try source.read(at: offset, count: Int(min(12, limit - offset)), format: format, path: path)
        let first = head[0]
        guard first != 0 else { throw MetascrubError.malformed(format: format, path: path, offset: offset, reason: "invalid element ID") }
        let idLength = first.leadingZeroBitCount + 1
        guard idLength <= 4 else { throw MetascrubError.malformed(format: format, path: path, offset: offset, reason: "element ID longer than 4 bytes") }
        guard head.count >= idLength + 1 else { throw MetascrubError.truncated(format: format, path: path, offset: offset, needed: Int64(idLength + 1 - head.count)) }
        var id: UInt32 = 0
        for i in 0..<idLength { id = id << 8 | UInt32(head[i]) }
        let s0 = head[idLength]
        guard s0 != 0 else { throw MetascrubError.malformed(format: format, path: path, offset: offset + Int64(idLength), reason: "invalid size field") }
        let sizeLength = s0.leadingZeroBitCount + 1
        guard head.count >= idLength + sizeLength else {
            throw MetascrubError.truncated(format: format, path: path, offset: offset, needed: Int64(idLength + sizeLength - head.count))
        }
        var value = UInt64(s0) & (0xFF >> UInt64(sizeLength))
        var allOnes = value == (0xFF >> UInt64(sizeLength))
        for i in 1..<sizeLength {
            let b = head[idLength + i]
            value = value << 8 | UInt64(b)
            allOnes = allOnes && b == 0xFF
        }
        let headerSize = idLength + sizeLength
        let dataOffset = offset + Int64(headerSize)
        if allOnes {
            return EBMLElement(id: id, offset: offset, headerSize: headerSize, size: nil, end: limit)
        }
        if allowCut, limit == source.size, value <= UInt64(Int64.max / 2), dataOffset + Int64(value) > limit, dataOffset <= limit {
            return EBMLElement(id: id, offset: offset, headerSize: headerSize, size: Int64(value), end: limit, cut: true)
        }
        guard value <= UInt64(Int64.max / 2), dataOffset + Int64(value) <= limit else {
            if limit == source.size || value > UInt64(Int64.max / 2) {
                throw MetascrubError.truncated(format: format, path: path, offset: offset,
                                               needed: value > UInt64(Int64.max / 2) ? Int64.max : dataOffset + Int64(value) - limit)
            }
            throw MetascrubError.malformed(format: format, path: path, offset: offset, reason: "element extends past its parent")
        }
        return EBMLElement(id: id, offset: offset, headerSize: headerSize, size: Int64(value), end: dataOffset + Int64(value))
    }

    /// The children of a master element with a known size (unknown-size children take the rest of the parent).
    static func children(_ source: any ByteSource, of parent: EBMLElement, path: String) throws -> [EBMLElement] {
        var out: [EBMLElement] = []
        var at = parent.dataOffset
        while at < parent.end {
            guard out.count < 1 << 16 else {
                throw MetascrubError.limitExceeded(format: format, path: path, offset: at, limit: "65536 children")
            }
            let e = try header(source, at: at, limit: parent.end, path: path)
            out.append(e)
            at = e.end
        }
        return out
    }

    static func uint(_ source: any ByteSource, _ e: EBMLElement) throws -> UInt64 {
        guard e.dataSize <= 8 else { throw MetascrubError.malformed(format: format, path: "integer element", offset: e.offset, reason: "integer longer than 8 bytes") }
        return try source.read(at: e.dataOffset, count: Int(e.dataSize)).reduce(0) { $0 << 8 | UInt64($1) }
    }

    static func float(_ source: any ByteSource, _ e: EBMLElement) throws -> Double? {
        let b = try source.read(at: e.dataOffset, count: Int(min(e.dataSize, 8)))
        switch b.count {
        case 4: return Double(Float(bitPattern: b.reduce(0) { $0 << 8 | UInt32($1) }))
        case 8: return Double(bitPattern: b.reduce(0) { $0 << 8 | UInt64($1) })
        case 0: return 0
        default: return nil
        }
    }

    static func bytes(_ source: any ByteSource, _ e: EBMLElement, limit: Int = 1 << 16) throws -> [UInt8] {
        try source.read(at: e.dataOffset, count: Int(min(e.dataSize, Int64(limit))))
    }

    /// A Void element (0xEC) of exactly `total` bytes (at least 2), zero-filled.
    static func void(_ total: Int64) -> [UInt8]? {
        guard total >= 2 else { return nil }
        for length in 1...8 {
            let content = total - 1 - Int64(length)
            guard content >= 0 else { return nil }
            let max = (Int64(1) << (7 * Int64(length))) - 2
            if content <= max {
                var size = [UInt8](repeating: 0, count: length)
                var v = content
                for i in stride(from: length - 1, through: 0, by: -1) {
                    size[i] = UInt8(v & 0xFF)
                    v >>= 8
                }
                size[0] |= UInt8(0x80 >> (length - 1))
                return [0xEC] + size
            }
        }
        return nil
    }
}
