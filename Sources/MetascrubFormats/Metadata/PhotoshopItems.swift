// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// Photoshop image resources and IPTC-IIM inside them, itemised as read-only children of an atomic block
/// (a TIFF tag, a PNG raw profile): the block is kept whole or dropped whole.
enum PhotoshopItems {
    static func itemise(
        irbOrIPTC bytes: [UInt8], origin: Int64, location: String, options: ScanOptions,
        into items: inout [MetadataItem], notes: inout [Note]
    ) {
        guard bytes.starts(with: Array("8BIM".utf8)) else {
            iptc(bytes, origin: origin, location: "\(location)/IPTC", options: options, into: &items, notes: &notes)
            return
        }
        let irb = PhotoshopIRB.parse(bytes)
        for resource in irb.resources {
            if resource.id == PhotoshopIRB.iptcID {
                iptc(Array(bytes[resource.dataRange]), origin: origin + Int64(resource.dataRange.lowerBound), location: "\(location)/IPTC",
                     options: options, into: &items, notes: &notes)
                continue
            }
            if resource.id == PhotoshopIRB.iptcDigestID { continue }
            let (name, category, known) = PhotoshopIRB.name(resource.id)
            items.append(MetadataItem(key: "photoshop:\(name)", category: category, location: "\(location)/8BIM/\(String(format4hex: resource.id))",
                                      offset: origin + Int64(resource.offset), length: Int64(resource.raw.count), isUnknown: !known))
        }
        if irb.restAt != nil {
            items.append(MetadataItem(key: "photoshop:unparsed", category: .content, location: location, offset: origin,
                                      detail: "bytes after the last image resource", isUnknown: true))
        }
    }

    private static func iptc(
        _ data: [UInt8], origin: Int64, location: String, options: ScanOptions, into items: inout [MetadataItem], notes: inout [Note]
    ) {
        do {
            let parsed = try IPTC.parse(data, origin: origin, path: location)
            _ = IPTC.itemise(parsed.datasets, bytes: data, location: location, origin: origin, options: options, into: &items, notes: &notes)
            if parsed.restAt != nil {
                items.append(MetadataItem(key: "iptc:unparsed", category: .content, location: location, offset: origin,
                                          detail: "bytes after the last IPTC dataset", isUnknown: true))
            }
        } catch {
            notes.append(Note(.warning, code: "iptc-unparsed", "IPTC block could not be parsed; treated as one block", offset: origin))
            items.append(MetadataItem(key: "iptc:block", category: .content, location: location, offset: origin,
                                      length: Int64(data.count), isUnknown: true))
        }
    }
}
