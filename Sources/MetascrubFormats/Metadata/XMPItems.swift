// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubNative

/// XMP packets, parsed by exiv2's XMP toolkit. Each top-level property is one item (`xmp:dc:rights`);
/// a packet is rebuilt with only the kept properties.
public enum XMPItems {
    /// Namespace prefixes whose properties are all of one category.
    static let namespaceCategory: [String: Category] = [
        "aux": .device, "exifEX": .device, "tiff": .device, "crs": .software, "xmpMM": .software, "stEvt": .software,
        "xmpRights": .identity, "plus": .identity, "cc": .identity, "mwg-rs": .identity, "MP": .identity,
        "MPRI": .identity, "MPReg": .identity, "Iptc4xmpCore": .content, "photoshop": .content, "dc": .content,
        "lr": .content, "GCamera": .embedded, "GImage": .embedded, "GDepth": .embedded, "GAudio": .embedded,
        "Container": .embedded, "Item": .embedded, "hdrgm": .embedded, "HDRGainMap": .embedded, "apdi": .embedded,
        "GPano": .content, "xmpNote": .embedded, "xmpDM": .content, "pdf": .software, "xmpTPg": .content,
        "xmpBJ": .content, "xmpGImg": .embedded,
    ]
    /// Single properties whose meaning differs from their namespace.
    static let propertyCategory: [String: Category] = [
        "dc:creator": .identity, "dc:rights": .identity, "dc:contributor": .identity, "dc:publisher": .identity,
        "dc:date": .time, "xmp:CreateDate": .time, "xmp:ModifyDate": .time, "xmp:MetadataDate": .time,
        "xmp:CreatorTool": .software, "xmp:Rating": .content, "xmp:Label": .content, "xmp:Identifier": .identity,
        "photoshop:City": .location, "photoshop:State": .location, "photoshop:Country": .location,
        "photoshop:DateCreated": .time, "photoshop:Credit": .identity, "photoshop:AuthorsPosition": .identity,
        "photoshop:CaptionWriter": .identity, "photoshop:Source": .identity, "photoshop:DocumentAncestors": .software,
        "photoshop:History": .software, "photoshop:TextLayers": .content, "photoshop:ICCProfile": .rendering,
        "photoshop:ColorMode": .structure,
        "Iptc4xmpCore:Location": .location, "Iptc4xmpCore:CountryCode": .location,
        "Iptc4xmpCore:CreatorContactInfo": .identity, "Iptc4xmpExt:LocationCreated": .location,
        "Iptc4xmpExt:LocationShown": .location, "Iptc4xmpExt:PersonInImage": .identity,
        "Iptc4xmpExt:PersonInImageWDetails": .identity, "tiff:Orientation": .rendering,
        "tiff:ImageWidth": .structure, "tiff:ImageLength": .structure, "tiff:XResolution": .structure,
        "tiff:YResolution": .structure, "tiff:ResolutionUnit": .structure, "tiff:Artist": .identity,
        "tiff:Copyright": .identity, "tiff:ImageDescription": .content, "tiff:Software": .software,
        "tiff:DateTime": .time, "exif:UserComment": .content,
    ]

    public static func category(prefix: String, name: String) -> Category {
        if let c = propertyCategory["\(prefix):\(name)"] { return c }
        if prefix == "exif" {
            if name.hasPrefix("GPS") { return .location }
            return ExifItems.category(tag: 0, directory: .exif, name: name)
        }
        if let c = namespaceCategory[prefix] { return c }
        return NameClassifier.category(of: name, otherwise: .content)
    }

    /// The top-level property of an exiv2 key: "Xmp.dc.creator[1]" → ("dc", "creator").
    static func topLevel(_ key: String) -> (prefix: String, name: String)? {
        let parts = key.split(separator: ".", maxSplits: 2)
        guard parts.count == 3, parts[0] == "Xmp" else { return nil }
        let name = parts[2].prefix { $0 != "[" && $0 != "/" }
        return (String(parts[1]), String(name))
    }

    /// Items of one packet, appended in document order; returns the indices and their exiv2 top-level keys.
    public static func itemise(
        packet: [UInt8], location: String, origin: Int64, options: ScanOptions,
        into items: inout [MetadataItem], notes: inout [Note]
    ) -> [Int: String] {
        var keys: [Int: String] = [:]
        let decoded: [DecodedTag]
        do {
            decoded = try Exiv2.decodeXMP(packet: packet)
        } catch {
            notes.append(Note(.warning, code: "xmp-unparsed", "XMP packet could not be parsed; treated as one unknown block", offset: origin))
            items.append(MetadataItem(key: "xmp:packet", category: .content, location: location, offset: origin,
                                      length: Int64(packet.count), detail: "unparsed XMP, \(packet.count) bytes", isUnknown: true))
            return [items.count - 1: "*"]
        }
        var seen: [String: Int] = [:]
        for tag in decoded {
            guard let (prefix, name) = topLevel(tag.key) else { continue }
            let exivKey = "Xmp.\(prefix).\(name)"
            let index: Int
            if let known = seen[exivKey] {
                index = known
                if options.includeValues, let value = items[index].value, value.count < 200 {
                    items[index].value = value + "; " + tag.value
                }
            } else {
                items.append(MetadataItem(
                    key: "xmp:\(prefix):\(name)", category: category(prefix: prefix, name: name),
                    location: "\(location)/\(prefix):\(name)", offset: origin, length: Int64(tag.size),
                    value: options.includeValues ? String(tag.value.prefix(200)) : nil))
                index = items.count - 1
                seen[exivKey] = index
                keys[index] = exivKey
            }
            positions(in: tag.value, property: index, options: options, items: &items)
            if let field = contactField(tag, property: index, options: options, items: &items) {
                keys[field] = fieldPath(tag.key)
            }
        }
        // XML comments are no property anyone reads, yet travel with a packet kept whole: an unknown item, whose
        // removal makes the rebuild re-serialise the packet without them.
        if let comment = ContentInspector.find(packet, "<!--", from: 0) {
            // Offsets of XMP items are the packet's, as for properties: the comment's text is what the proof looks for.
            let start = comment + 4
            let end = ContentInspector.find(packet, "-->", from: start) ?? packet.count
            let text = String(decoding: packet[start..<max(start, end)].prefix(200), as: UTF8.self)
            items.append(MetadataItem(key: "xmp:comment", category: .content, location: location, offset: origin,
                                      value: options.includeValues ? text.trimmingWhitespace : nil,
                                      detail: "XML comment inside the XMP packet", isUnknown: true))
            keys[items.count - 1] = commentKey
        }
        if decoded.isEmpty {
            // An empty packet (only the wrapper) is still a block: an item so the policy can drop it.
            items.append(MetadataItem(key: "xmp:packet", category: .structure, location: location, offset: origin,
                                      length: Int64(packet.count), detail: "empty XMP packet"))
            keys[items.count - 1] = "*"
        }
        return keys
    }

    /// A position written into a property's text (a description, a title, a keyword) is an item inside the
    /// property, and decides it, as in EXIF text (`ContentInspector`). Property offsets are the packet's.
    static func positions(in value: String, property: Int, options: ScanOptions, items: inout [MetadataItem]) {
        guard items[property].category != .location else { return }
        // Every shape of a position has digits; most property values (names, tools, flags, dates' words) have none,
        // and a camera's packet has hundreds of them.
        guard value.utf8.contains(where: { $0 >= 0x30 && $0 <= 0x39 }) else { return }
        let bytes = Array(value.utf8.prefix(ContentInspector.limit))
        for (match, _) in ContentInspector.locations(in: bytes) where match.kind != .element {
            let key = "inspect:location:\(match.kind.rawValue)"
            guard !items[property...].contains(where: { $0.parent == property && $0.key == key }) else { continue }
            let range = match.range.clamped(to: 0..<bytes.count)
            items.append(MetadataItem(
                key: key, category: .location, location: "\(items[property].location) > location", offset: items[property].offset,
                length: Int64(range.count), value: options.includeValues ? ValueText.render(bytes[range]) : nil,
                detail: "\(match.kind.what) inside \(items[property].key)", parent: property))
        }
    }

    /// Fields of a structure that say where a person lives or how to reach them (a licensor's street address, a
    /// contact's phone) are items inside the structure, so a policy that keeps the structure for its name still sees
    /// an address in it: `plus:Licensor/plus:LicensorCity` is a location, `…Telephone1` identity.
    /// The field is `separable`: the packet is rebuilt without it (`rebuild`), the structure's other fields kept.
    /// Returns the field's item, when one was added.
    @discardableResult
    static func contactField(
        _ tag: DecodedTag, property: Int, options: ScanOptions, items: inout [MetadataItem]
    ) -> Int? {
        guard let slash = tag.key.lastIndex(of: "/"), !tag.value.isEmpty else { return nil }
        let field = String(tag.key[tag.key.index(after: slash)...])
        let local = field.split(separator: ":").last.map { String($0).lowercased() } ?? ""
        let category: Category
        if ["streetaddress", "extadr", "city", "postalcode", "pcode", "region", "ctry", "country", "state", "address"]
            .contains(where: { local.hasSuffix($0) }) { category = .location }
        else if ["telephone1", "telephone2", "telwork", "email", "emailwork", "url", "urlwork"]
            .contains(where: { local.hasSuffix($0) }) { category = .identity }
        else { return nil }
        guard items[property].category != category else { return nil }
        let key = "\(items[property].key)/\(field)"
        guard !items[property...].contains(where: { $0.parent == property && $0.key == key }) else { return nil }
        var item = MetadataItem(
            key: key, category: category, location: "\(items[property].location)/\(field)", offset: items[property].offset,
            length: Int64(tag.size), value: options.includeValues ? String(tag.value.prefix(200)) : nil,
            detail: "\(category == .location ? "an address" : "contact details") inside \(items[property].key)",
            parent: property)
        item.separable = true
        items.append(item)
        return items.count - 1
    }

    /// An exiv2 key without its array indices: "Xmp.plus.Licensor[1]/plus:LicensorCity" →
    /// "Xmp.plus.Licensor/plus:LicensorCity", the same field in every element of the array.
    static func fieldPath(_ key: String) -> String {
        var path = ""
        var inIndex = false
        for character in key {
            if character == "[" { inIndex = true } else if character == "]" { inIndex = false }
            else if !inIndex { path.append(character) }
        }
        return path
    }

    /// The rebuilt packet: unchanged when everything is kept, nil when nothing is. `keys` holds top-level
    /// properties and, with a `/` in them, structure fields (`fieldPath`): a removed field of a kept property is
    /// left out of it.
    public static func rebuild(packet: [UInt8], keys: [Int: String], keeps: (Int) -> Bool) throws -> [UInt8]? {
        let kept = keys.filter { keeps($0.key) }
        if kept.count == keys.count { return packet }
        let properties = Set(kept.values.filter { !$0.contains("/") }).subtracting([commentKey])
        if properties.isEmpty || properties.contains("*") { return nil }
        let fields = Set(keys.filter { !keeps($0.key) }.values.filter { $0.contains("/") })
        return try Exiv2.filterXMP(packet: packet, keepingTopLevelKeys: properties, droppingFields: fields)
    }

    /// The `keys` entry of a packet's XML comments (no exiv2 key: re-serialising drops them).
    static let commentKey = "#comment"
}
