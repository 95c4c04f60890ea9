// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// Free text and slack inside the boxes a HEIF rewrite keeps as structure: the `hdlr` name, item names in `infe`
/// and bytes after an entry's fields, `ftyp` compatible brands no reader knows (four free bytes each), and a `free`
/// box inside `ipco` that holds anything but zeros. No decoder reads them, so each is an `unknown` item and the box
/// is written from its parsed fields without it.
extension HEIFScanner {
    /// Brands of the HEIF, MIAF, AVIF and ISOBMFF family a HEIF or AVIF file lists.
    static let knownBrands: Set<FourCC> = [
        "mif1", "mif2", "mif3", "msf1", "miaf", "heic", "heix", "heim", "heis", "hevc", "hevx", "hevm", "hevs",
        "avif", "avis", "avio", "avci", "avcs", "jpeg", "jpgs", "vvic", "vvis", "j2ki", "j2is", "jxl ", "unif",
        "tmap", "1pic", "pred", "isom", "iso2", "iso4", "iso6", "iso8", "mp41", "mp42", "MiHA", "MiHB", "MiHE",
        "MiA1", "MiA2", "MiA3", "MiAC", "MiAN", "MA1A", "MA1B", "MiPr", "MiCm", "MiBr", "MiHP", "uncv", "altr",
        "ster",
    ]
    /// Bytes of `hdlr`'s fields before its name: version/flags, pre_defined, handler_type, three reserved words.
    static let handlerFields = 24
    /// `dinf` as a file whose data is all in itself writes it: one `url ` entry flagged self-contained, no location.
    static let selfContainedDataInformation: [UInt8] = BoxWriter.box(
        "dinf", BoxWriter.box("dref", [0, 0, 0, 0, 0, 0, 0, 1] + BoxWriter.box("url ", [0, 0, 0, 1])))

    static func itemiseStructureText(
        _ reader: BoxReader, _ layout: inout HEIFLayout, found: inout ItemCollector
    ) throws {
        if let ftyp = layout.top.first, ftyp.type == "ftyp", ftyp.payloadSize >= 8, ftyp.payloadSize <= 4096 {
            let payload = try reader.payload(of: ftyp)
            let brands = stride(from: 8, to: payload.count - 3, by: 4).map { FourCC(bytes: payload[$0..<$0 + 4]) }
            let known = brands.filter { knownBrands.contains($0) }
            if known.count != brands.count || payload.count % 4 != 0 {
                let strangers = brands.count - known.count
                // From the first brand no reader knows (or the bytes after the last brand) to the end of the box.
                let first = brands.firstIndex { !knownBrands.contains($0) } ?? brands.count
                let strange = ftyp.payloadOffset + 8 + 4 * Int64(first)..<ftyp.end
                let item = found.add("heif:ftyp:brands", .content, strange, location: "ftyp",
                                     detail: "\(strangers) compatible brands no reader knows or bytes after the last",
                                     unknown: true)
                layout.ftypText = (item, BoxWriter.box("ftyp", Array(payload[0..<8]) + known.flatMap(\.bytes)))
            }
        }
        for child in layout.meta.children where child.type == "hdlr" && child.payloadSize <= 4096 {
            let payload = try reader.payload(of: child)
            guard payload.count >= handlerFields, payload[handlerFields...].contains(where: { $0 != 0 }) else {
                continue
            }
            let item = found.add("heif:hdlr:name", .content, child.payloadOffset + Int64(handlerFields)..<child.end,
                                 location: child.path,
                                 detail: "handler name or bytes after the handler's fields, "
                                     + "\(payload.count - handlerFields) bytes", unknown: true)
            layout.hdlrText = (item, BoxWriter.box("hdlr", Array(payload[0..<handlerFields]) + [0]))
        }
        // A data reference naming a location (a `url ` with a path, a `urn `): no item of a cleaned file may use it.
        for child in layout.meta.children where child.type == "dinf" && child.payloadSize <= 4096 {
            let bytes = try reader.bytes(of: child)
            guard bytes != selfContainedDataInformation else { continue }
            // The item spans what differs from the self-contained form (a location string, an extra entry).
            let same = zip(bytes, selfContainedDataInformation).prefix { $0 == $1 }.count
            let item = found.add("heif:dinf", .content, child.offset + Int64(same)..<child.end, location: child.path,
                                 detail: "data references other than the file itself, or bytes after them",
                                 unknown: true)
            layout.dinfText = (item, selfContainedDataInformation)
        }
        for entry in layout.meta.items where entry.plain != nil {
            layout.nameOwner[entry.id] = found.add(
                "heif:infe:name", .content, entry.freeText ?? entry.box.range, location: entry.box.path,
                detail: "name of item \(entry.id) or bytes after its entry's fields", unknown: true)
        }
        for (i, property) in layout.meta.properties.enumerated() where ["free", "skip"].contains(property.type) {
            guard try !isZero(reader.source, property.payloadRange) else { continue }
            layout.propertyOwner[i + 1] = found.add(
                "heif:free", .content, property.range, location: "meta/iprp/ipco/free#\(i + 1)",
                detail: "free space in ipco holding \(property.payloadSize) bytes of old data", unknown: true)
        }
    }
}
