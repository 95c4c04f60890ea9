// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// One JUMBF superbox (ISO/IEC 19566-5): a `jumb` box whose first child, `jumd`, says what it is (a 16-byte type
/// whose first four bytes name it for C2PA: `c2pa`, `c2ma`, `c2as`, `c2cl`, `cbor`, `json`, …, and a label),
/// followed by content boxes (`json`, `cbor`, `bidb`, `bfdb`, `c2sh`, `uuid`) or more superboxes.
struct JUMBFBox: Sendable {
    struct Content: Sendable {
        var type: FourCC
        /// The box's payload, as offsets into the JUMBF bytes.
        var payload: Range<Int>
    }

    var type: [UInt8]
    var label: String?
    /// The whole superbox, as offsets into the JUMBF bytes.
    var range: Range<Int>
    var children: [JUMBFBox] = []
    var contents: [Content] = []

    /// The type's first four bytes as text (`c2ma`), or the UUID in hex for types that are not C2PA's.
    var typeCode: String {
        let head = type.prefix(4)
        guard head.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return BoxUUID.hex(type) }
        return String(decoding: head, as: UTF8.self)
    }

    static let maxDepth = 16

    /// Parses `bytes`, which must be exactly one superbox; `path` names it in errors.
    static func parse(_ bytes: [UInt8], origin: Int64, path: String) throws -> JUMBFBox {
        let reader = BoxReader(MemoryByteSource(bytes), format: "JUMBF")
        let top = try reader.topLevel()
        guard top.boxes.count == 1, let box = top.boxes.first, box.type == "jumb", top.leftover == nil else {
            throw MetascrubError.malformed(format: "JUMBF", path: path, offset: origin,
                                           reason: "not one JUMBF superbox")
        }
        return try superbox(box, reader: reader, bytes: bytes, origin: origin, depth: 0)
    }

    private static func superbox(
        _ box: Box, reader: BoxReader, bytes: [UInt8], origin: Int64, depth: Int
    ) throws -> JUMBFBox {
        func malformed(_ reason: String) -> MetascrubError {
            .malformed(format: "JUMBF", path: box.path, offset: origin + box.offset, reason: reason)
        }
        guard depth < maxDepth else { throw malformed("superboxes nested deeper than \(maxDepth)") }
        let children = try reader.children(of: box, depth: depth + 1).boxes
        guard let description = children.first, description.type == "jumd", description.payloadSize >= 17 else {
            throw malformed("superbox without a description box")
        }
        let d = Int(description.payloadOffset)
        let type = Array(bytes[d..<d + 16])
        let toggles = bytes[d + 16]
        var label: String?
        if toggles & 0x02 != 0 {
            let start = d + 17
            guard let end = bytes[start..<Int(description.end)].firstIndex(of: 0) else {
                throw malformed("label without its terminating zero")
            }
            label = String(decoding: bytes[start..<end], as: UTF8.self)
        }
        var result = JUMBFBox(type: type, label: label, range: Int(box.offset)..<Int(box.end))
        for child in children.dropFirst() {
            if child.type == "jumb" {
                let inner = try superbox(child, reader: reader, bytes: bytes, origin: origin, depth: depth + 1)
                result.children.append(inner)
            } else {
                result.contents.append(Content(type: child.type, payload: Int(child.payloadOffset)..<Int(child.end)))
            }
        }
        return result
    }

    func child(_ code: String) -> JUMBFBox? { children.first { $0.typeCode == code } }
}
