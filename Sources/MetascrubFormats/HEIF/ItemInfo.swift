// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// One `infe` entry of the item information box: what an item is. The entry box is copied unchanged into a
/// rewritten `iinf`, so only what classification needs is decoded.
struct HEIFItem: Sendable {
    var id: UInt32
    /// `infe` version 2 and later; older entries are typed by their content type only (`mime`).
    var type: FourCC
    var contentType: String?
    var contentEncoding: String?
    /// Hidden items (tiles, derivation inputs) are not meant to be shown on their own.
    var hidden: Bool
    /// The `infe` box.
    var box: Box
    /// The entry as written from its fields with an empty name and nothing after its last field; nil when the box
    /// already is exactly that (a name is free text no decoder reads).
    var plain: [UInt8]?
    /// Where the name is in the file, or the bytes after the entry's fields when the name is empty: the free text
    /// `plain` leaves out (what the residue proof looks for).
    var freeText: Range<Int64>?

    static let exif: FourCC = "Exif"
    static let mime: FourCC = "mime"
    static let uri: FourCC = "uri "
    /// Coded and derived image item types (HEIF, AVIF, JPEG, VVC, uncompressed, tone-mapped).
    static let imageTypes: Set<FourCC> = [
        "hvc1", "hev1", "av01", "jpeg", "grid", "iovl", "iden", "avc1", "vvc1", "vvi1", "j2k1", "unci", "mski", "tmap",
        "hvt1", "lhv1", "jxl ", "avs3",
    ]
    var isImage: Bool { Self.imageTypes.contains(type) }

    var isXMP: Bool {
        type == Self.mime && (contentType ?? "").trimmingWhitespace.lowercased() == "application/rdf+xml"
            && (contentEncoding ?? "").isEmpty
    }
}

/// `iinf`: the list of items.
struct ItemInfoBox {
    var version: UInt8
    var items: [HEIFItem]

    static func parse(_ box: Box, reader: BoxReader) throws -> ItemInfoBox {
        let (version, _) = try reader.fullBoxHeader(of: box)
        let countSize = version == 0 ? 2 : 4
        let listing = try reader.children(of: box, skip: 4 + countSize, depth: 2)
        var items: [HEIFItem] = []
        var seen = Set<UInt32>()
        for entry in listing.boxes where entry.type == "infe" {
            let item = try parseEntry(entry, reader: reader)
            guard seen.insert(item.id).inserted else {
                throw MetascrubError.malformed(format: reader.format, path: entry.path, offset: entry.offset, reason: "item \(item.id) is described twice")
            }
            items.append(item)
        }
        return ItemInfoBox(version: version, items: items)
    }

    static func parseEntry(_ box: Box, reader: BoxReader) throws -> HEIFItem {
        let payload = try reader.payload(of: box)
        var c = ByteCursor(payload, origin: box.payloadOffset, format: reader.format, path: box.path)
        let (version, flags) = try c.fullBoxHeader()
        var w = ByteWriter()
        w.fullBoxHeader(version: version, flags: flags)
        func string(_ what: String) throws -> String {
            let text = try c.cString(what)
            w.append(Array(text.utf8) + [0])
            return text
        }
        var item: HEIFItem
        var name = 0..<0
        switch version {
        case 0, 1:
            let id = try c.u16("item_ID"), protection = try c.u16("item_protection_index")
            w.u16(id)
            w.u16(protection)
            let nameStart = c.position
            _ = try c.cString("item_name")
            name = nameStart..<c.position
            w.u8(0)
            let contentType = try string("content_type")
            let encoding = c.atEnd ? "" : try string("content_encoding")
            item = HEIFItem(id: UInt32(id), type: HEIFItem.mime, contentType: contentType, contentEncoding: encoding,
                            hidden: false, box: box)
        case 2, 3:
            let id = version == 2 ? UInt32(try c.u16("item_ID")) : try c.u32("item_ID")
            if version == 2 { w.u16(UInt16(id)) } else { w.u32(id) }
            w.u16(try c.u16("item_protection_index"))
            let type = try c.fourCC("item_type")
            w.fourCC(type)
            let nameStart = c.position
            _ = try c.cString("item_name")
            name = nameStart..<c.position
            w.u8(0)
            var contentType: String?
            var encoding: String?
            if type == HEIFItem.mime {
                contentType = try string("content_type")
                encoding = c.atEnd ? "" : try string("content_encoding")
            } else if type == HEIFItem.uri {
                _ = try string("item_uri_type")
            }
            item = HEIFItem(id: id, type: type, contentType: contentType, contentEncoding: encoding,
                            hidden: flags & 1 != 0, box: box)
        default:
            throw c.malformed("item info entry version \(version) is not defined")
        }
        if w.bytes != payload {
            item.plain = BoxWriter.box("infe", w.bytes)
            // A name with its NUL is longer than one byte; otherwise what differs is after the last field.
            let text = name.count > 1 ? name : c.position..<payload.count
            item.freeText = box.payloadOffset + Int64(text.lowerBound)..<box.payloadOffset + Int64(text.upperBound)
        }
        return item
    }

    /// The rebuilt box with the kept entries copied byte for byte, or written plain (`HEIFItem.plain`) where `plain`
    /// says so.
    func serialize(
        keeping kept: [HEIFItem], reader: BoxReader, plain: (UInt32) -> Bool = { _ in false }
    ) throws -> [UInt8] {
        let version: UInt8 = kept.count > 0xFFFF ? 1 : self.version
        var w = ByteWriter()
        w.fullBoxHeader(version: version, flags: 0)
        if version == 0 { w.u16(UInt16(kept.count)) } else { w.u32(UInt32(kept.count)) }
        for item in kept {
            if let bytes = item.plain, plain(item.id) {
                w.append(bytes)
            } else {
                w.append(try reader.bytes(of: item.box))
            }
        }
        return BoxWriter.box("iinf", w.bytes)
    }
}

extension String {
    var trimmingWhitespace: String {
        var s = Substring(self)
        while let f = s.first, f.isWhitespace || f == "\0" { s.removeFirst() }
        while let l = s.last, l.isWhitespace || l == "\0" { s.removeLast() }
        return String(s)
    }
}
