// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// JUMBF boxes in APP11 segments (ISO/IEC 19566-5 in JPEG): each segment is `JP`, a box instance number, a
/// packet sequence number, then the box's LBox/TBox header, repeated in every segment of the box, and a slice of
/// its payload. One box is one item, kept or dropped with all its segments; a C2PA manifest store is read.
enum JPEGJUMBF {
    /// Largest box put back together in memory (C2PA stores are kilobytes to a few megabytes with thumbnails).
    static let maxBox = 64 << 20

    static func itemise(_ segments: [Int], _ structure: JPEGStructure, _ source: any ByteSource,
                        into found: inout ItemCollector, layout: inout JPEGLayout) throws {
        var packets: [(sequence: Int, segment: Int, payload: [UInt8])] = []
        var total = 0
        for index in segments {
            let segment = structure.segments[index]
            let payload = try source.read(at: segment.payloadOffset, count: segment.payloadLength)
            total += payload.count
            guard payload.count >= 16, total <= maxBox else {
                whole(segments, structure, into: &found, layout: &layout, detail: "JUMBF box (APP11), not read",
                      unknown: true)
                return
            }
            packets.append((BigEndian.u32(payload, 4), index, payload))
        }
        packets.sort { $0.sequence < $1.sequence }
        // The first packet holds the box header; the others repeat it (8 bytes, or 16 with an XLBox) before their
        // slice.
        let headerLength = BigEndian.u32(packets[0].payload, 8) == 1 ? 16 : 8
        var bytes: [UInt8] = []
        var runs: [(at: Int, file: Int64)] = []
        for (n, packet) in packets.enumerated() {
            let skip = n == 0 ? 8 : 8 + headerLength
            guard packet.payload.count >= skip else {
                whole(segments, structure, into: &found, layout: &layout, detail: "JUMBF box (APP11), not read",
                      unknown: true)
                return
            }
            runs.append((bytes.count, structure.segments[packet.segment].payloadOffset + Int64(skip)))
            bytes += packet.payload[skip...]
        }
        // The store's description box names its type first: `jumb` header, `jumd` header, then `c2pa` and 12 bytes.
        let isC2PA = bytes.count >= 20 && bytes[16..<20].elementsEqual(Array("c2pa".utf8))
        let store = whole(segments, structure, into: &found, layout: &layout,
                          detail: isC2PA ? "C2PA manifest store (JUMBF)" : "JUMBF box",
                          key: isC2PA ? "jumbf:c2pa" : "jumbf:box")
        guard isC2PA else { return }
        try found.c2pa(bytes, store: store, placement: JUMBFPlacement(runs: runs), source: source)
        for index in segments { layout.segmentItems[index] = Array(store..<found.items.count) }
    }

    /// One item for all the box's segments; returns its index.
    @discardableResult
    private static func whole(_ segments: [Int], _ structure: JPEGStructure, into found: inout ItemCollector,
                              layout: inout JPEGLayout, detail: String, key: String = "jumbf:box",
                              unknown: Bool = false) -> Int {
        let first = structure.segments[segments[0]]
        let length = segments.reduce(0) { $0 + structure.segments[$1].length }
        let ordinal = structure.segments[..<segments[0]].filter { $0.marker == first.marker }.count + 1
        let plural = segments.count == 1 ? "" : "s"
        let item = found.add(key, .provenance, location: "APP11#\(ordinal)", offset: first.offset,
                             length: Int64(length),
                             detail: "\(detail), \(segments.count) segment\(plural)", unknown: unknown)
        for index in segments { layout.segmentItems[index] = [item] }
        return item
    }
}
