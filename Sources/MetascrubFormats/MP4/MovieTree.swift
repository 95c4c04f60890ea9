// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// A box and, for the containers a cleaner rewrites, its children: the parsed `moov` (or `moof`, top-level
/// `meta`). Leaf boxes are kept as headers only; their bytes are read when they are copied or patched.
struct MovieNode: Sendable {
    var box: Box
    var children: [MovieNode]
    /// Bytes of the container's own fields before its first child (a full box's version and flags).
    var fieldsSize: Int

    var type: FourCC { box.type }

    func child(_ type: FourCC) -> MovieNode? { children.first { $0.type == type } }
    func children(_ type: FourCC) -> [MovieNode] { children.filter { $0.type == type } }

    /// The first node along a path of types below this one (`mdia/minf/stbl`).
    func descendant(_ path: String) -> MovieNode? {
        var node: MovieNode? = self
        for part in path.split(separator: "/") { node = node?.child(FourCC(String(part))) }
        return node
    }

    /// Containers whose children are boxes, with the size of their own fields. `meta` is a full box in ISO
    /// files and a plain box in QuickTime ones; `stsd` and sample entries are not opened here.
    static let containers: [FourCC: Int] = [
        "moov": 0, "trak": 0, "mdia": 0, "minf": 0, "stbl": 0, "edts": 0, "dinf": 0, "udta": 0, "tref": 0, "mvex": 0,
        "ilst": 0, "gmhd": 0, "moof": 0, "traf": 0, "mfra": 0, "meta": 4,
    ]

    /// Parses `box` and, recursively, the containers inside it.
    static func parse(_ box: Box, reader: BoxReader, depth: Int = 1) throws -> MovieNode {
        guard var fields = containers[box.type] else { return MovieNode(box: box, children: [], fieldsSize: 0) }
        if box.type == "meta" {
            // QuickTime's meta has no version/flags: its payload starts with a box (usually hdlr) at once.
            let head = try reader.source.read(at: box.payloadOffset, count: Int(min(8, box.payloadSize)), format: reader.format, path: box.path)
            if head.count == 8, FourCC(bytes: head[4..<8]).isPrintable, BigEndian.u32(head, 0) >= 8 { fields = 0 }
        }
        let listing = try reader.children(of: box, skip: fields, depth: depth, anyType: box.type == "ilst")
        let children = try listing.boxes.map { try parse($0, reader: reader, depth: depth + 1) }
        return MovieNode(box: box, children: children, fieldsSize: fields)
    }

    /// Every node in the tree, depth first.
    func walk(_ visit: (MovieNode) throws -> Void) rethrows {
        try visit(self)
        for child in children { try child.walk(visit) }
    }
}
