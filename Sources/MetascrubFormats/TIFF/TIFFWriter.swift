// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// Writes a new TIFF (or BigTIFF, as the input was) holding the kept IFDs and entries, in the input's byte
/// order. Image data blocks are copied unchanged and their offsets rewritten; the layout is: header, every
/// data block, then every IFD followed by its out-of-line values.
struct TIFFWriter {
    struct Entry {
        enum Value {
            /// The value bytes in the file's byte order.
            case bytes([UInt8])
            /// Offsets of these source ranges once copied.
            case data([Range<Int64>])
            /// Offsets of these planned IFDs.
            case ifds([Int])
        }

        var tag: UInt16
        var type: UInt16
        var count: UInt64
        var value: Value
    }

    struct IFD {
        var entries: [Entry]
        var next: Int?
    }

    let layout: TIFFLayout
    let source: any ByteSource
    /// Whether the item at this index is written again.
    let keeps: (Int) -> Bool
    /// Entries written instead of (or besides) the node's own, by tag: a re-encoded image (`TIFFImageSplice`).
    var replacement: (node: Int, entries: [UInt16: Entry])?
    /// Only the first page's metadata entries and their Exif/GPS IFDs: an Exif block for a converted image
    /// (`TIFFCarried`), without image structure, strips, XMP or IPTC.
    var metadataOnly = false
    var ifds: [IFD] = []
    var notes: [Note] = []

    var structure: TIFFStructure { layout.structure }

    init(layout: TIFFLayout, source: any ByteSource, plan: CleanPlan) {
        self.init(layout: layout, source: source, keeps: { plan.keeps($0) })
    }

    init(layout: TIFFLayout, source: any ByteSource, keeps: @escaping (Int) -> Bool) {
        self.layout = layout
        self.source = source
        self.keeps = keeps
    }

    /// The whole output, as pieces.
    mutating func build() throws -> OutputPlan {
        var previous: Int?
        var root: Int?
        for node in metadataOnly ? Array(layout.chain.prefix(1)) : layout.chain {
            let n = layout.nodes[node]
            if let item = n.atomicItem, !keeps(item) { continue }
            guard let planned = try planNode(node) else { continue }
            if let previous { ifds[previous].next = planned } else { root = planned }
            previous = planned
        }
        guard let root else {
            throw MetascrubError.verificationFailed(reason: "no image IFD would be left")
        }
        return try emit(root: root)
    }

    /// Plans one IFD and, recursively, the sub-IFDs it keeps; nil when nothing of it is kept.
    private mutating func planNode(_ index: Int) throws -> Int? {
        let node = layout.nodes[index]
        var entries: [Entry] = []
        var replaced = replacement?.node == index ? replacement?.entries ?? [:] : [:]
        for (entry, fate) in zip(node.ifd.entries, node.fates) {
            if let instead = replaced.removeValue(forKey: entry.tag) {
                entries.append(instead)
                continue
            }
            if metadataOnly, node.role.holdsImage {
                switch fate {
                case .structural, .data, .orientation, .xmp, .iptc, .drop: continue
                case .item, .pointer: break
                }
            }
            func copy() throws { entries.append(Entry(tag: entry.tag, type: entry.type, count: entry.count, value: .bytes(try structure.bytes(source, entry)))) }
            switch fate {
            case .structural:
                try copy()
            case .data(let ranges):
                entries.append(Entry(tag: entry.tag, type: structure.isBig ? 16 : 4, count: UInt64(ranges.count), value: .data(ranges)))
            case .item(let item):
                guard keeps(item) else { continue }
                if entry.tag == ExifBlock.makerNote {
                    notes.append(Note(.warning, code: "makernote-moved", "the kept maker note had to move; its internal offsets may no longer resolve"))
                }
                try copy()
            case .orientation(let item):
                if keeps(item) { try copy() }
            case .xmp(let packet, let keys):
                guard let rebuilt = try XMPItems.rebuild(packet: packet, keys: keys, keeps: keeps) else { continue }
                if rebuilt == packet { try copy(); continue }
                entries.append(Entry(tag: entry.tag, type: entry.type == 7 ? 7 : 1, count: UInt64(rebuilt.count), value: .bytes(rebuilt)))
            case .iptc(let datasets, let map):
                if map.keys.allSatisfy(keeps) { try copy(); continue }
                guard var data = IPTC.rebuild(datasets, map: map, keeps: keeps) else { continue }
                if entry.type == 4 {
                    // Written as LONGs by most tools; zero padding is allowed after the last dataset.
                    data += [UInt8](repeating: 0, count: (4 - data.count % 4) % 4)
                    entries.append(Entry(tag: entry.tag, type: 4, count: UInt64(data.count / 4), value: .bytes(data)))
                } else {
                    entries.append(Entry(tag: entry.tag, type: 7, count: UInt64(data.count), value: .bytes(data)))
                }
            case .pointer(let children):
                var kept: [Int] = []
                for child in children {
                    if let item = layout.nodes[child].atomicItem, !keeps(item) { continue }
                    if let planned = try planNode(child) { kept.append(planned) }
                }
                guard !kept.isEmpty else { continue }
                let type: UInt16 = structure.isBig ? (entry.type == 18 ? 18 : 16) : (entry.type == 13 ? 13 : 4)
                entries.append(Entry(tag: entry.tag, type: type, count: UInt64(kept.count), value: .ifds(kept)))
            case .drop:
                continue
            }
        }
        entries += replaced.values
        if !node.role.holdsImage && entries.isEmpty { return nil }
        entries.sort { $0.tag < $1.tag }
        ifds.append(IFD(entries: entries, next: nil))
        return ifds.count - 1
    }

    private func valueLength(_ entry: Entry) -> Int64 {
        switch entry.value {
        case .bytes(let b): Int64(b.count)
        case .data(let r): Int64(r.count) * (structure.isBig ? 8 : 4)
        case .ifds(let i): Int64(i.count) * (structure.isBig ? 8 : 4)
        }
    }

    private func ifdSize(_ ifd: IFD) -> Int64 {
        (structure.isBig ? 16 : 6) + Int64(ifd.entries.count) * structure.entrySize
    }

    private func emit(root: Int) throws -> OutputPlan {
        // Pass 1: where everything goes.
        var position = structure.headerSize
        var dataAt: [Range<Int64>: Int64] = [:]
        var dataOrder: [Range<Int64>] = []
        for ifd in ifds {
            for entry in ifd.entries {
                guard case .data(let ranges) = entry.value else { continue }
                for range in ranges where dataAt[range] == nil && !range.isEmpty {
                    position += position & 1
                    dataAt[range] = position
                    dataOrder.append(range)
                    position += Int64(range.count)
                }
            }
        }
        var ifdAt: [Int64] = []
        var valueAt: [[Int64?]] = []
        for ifd in ifds {
            position += position & 1
            ifdAt.append(position)
            position += ifdSize(ifd)
            valueAt.append(ifd.entries.map { entry in
                let length = valueLength(entry)
                guard length > structure.inlineCapacity else { return nil }
                position += position & 1
                defer { position += length }
                return position
            })
        }
        guard structure.isBig || position <= 0xFFFF_FFFF else {
            throw MetascrubError.limitExceeded(format: "TIFF", path: "rewritten file", offset: 0, limit: "4 GiB (classic TIFF offsets)")
        }

        // Pass 2: the bytes.
        var out = OutputPlan()
        let order = structure.order
        if structure.isBig {
            out.append((order.bigEndian ? [0x4D, 0x4D] : [0x49, 0x49]) + order.bytes(UInt16(43)) + order.bytes(UInt16(8)) + order.bytes(UInt16(0))
                       + structure.bytes64(UInt64(ifdAt[root])))
        } else {
            out.append((order.bigEndian ? [0x4D, 0x4D] : [0x49, 0x49]) + order.bytes(UInt16(42)) + order.bytes(UInt32(ifdAt[root])))
        }
        func pad(to offset: Int64) {
            if out.size < offset { out.append([UInt8](repeating: 0, count: Int(offset - out.size)), because: .padding) }
        }
        for range in dataOrder {
            pad(to: dataAt[range]!)
            // Strips and tiles: the content check compares them image by image.
            out.copy(range, because: .codedData)
        }
        for (i, ifd) in ifds.enumerated() {
            pad(to: ifdAt[i])
            var table = structure.isBig ? structure.bytes64(UInt64(ifd.entries.count)) : order.bytes(UInt16(ifd.entries.count))
            var values: [(Int64, [UInt8])] = []
            for (k, entry) in ifd.entries.enumerated() {
                let bytes: [UInt8]
                switch entry.value {
                case .bytes(let b): bytes = b
                case .data(let ranges): bytes = ranges.flatMap { structure.offsetBytes($0.isEmpty ? 0 : dataAt[$0]!) }
                case .ifds(let children): bytes = children.flatMap { structure.offsetBytes(ifdAt[$0]) }
                }
                table += order.bytes(entry.tag) + order.bytes(entry.type)
                table += structure.isBig ? structure.bytes64(entry.count) : order.bytes(UInt32(truncatingIfNeeded: entry.count))
                if let at = valueAt[i][k] {
                    table += structure.offsetBytes(at)
                    values.append((at, bytes))
                } else {
                    table += bytes + [UInt8](repeating: 0, count: Int(structure.inlineCapacity) - bytes.count)
                }
            }
            table += structure.offsetBytes(ifd.next.map { ifdAt[$0] } ?? 0)
            out.append(table)
            for (at, bytes) in values {
                pad(to: at)
                out.append(bytes)
            }
        }
        return out
    }
}
