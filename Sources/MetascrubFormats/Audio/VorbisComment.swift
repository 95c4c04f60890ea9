// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// A Vorbis comment list (xiph.org Vorbis I §5): vendor string, then `NAME=value` fields, all little-endian
/// length-prefixed UTF-8. Used by FLAC's VORBIS_COMMENT block and the Ogg Vorbis/Opus/Speex/Theora comment
/// packets (which add a codec prefix and, for Vorbis, a framing bit).
struct VorbisComment {
    static let maxComments = 1 << 16

    var vendor: [UInt8]
    /// Each field as written (`NAME=value`).
    var fields: [[UInt8]]
    /// Item index of the vendor string (nil when it is empty) and of each field.
    var vendorItem: Int?
    var fieldItems: [Int] = []
    /// Where the list ends in the parsed bytes (Opus may append binary data after it).
    var end: Int
    /// Picture fields looked into as files of their own: field index → the PICTURE structure before the picture.
    var pictures: [Int: [UInt8]] = [:]
    /// Field index → the item of its picture's description, when it has one.
    var pictureDescriptions: [Int: Int] = [:]

    static func parse(_ b: [UInt8], at start: Int, format: String, path: String, origin: Int64) throws -> VorbisComment {
        var at = start
        func length() throws -> Int {
            guard at + 4 <= b.count else {
                throw MetascrubError.truncated(format: format, path: path, offset: origin + Int64(at), needed: Int64(at + 4 - b.count))
            }
            let n = Int(ByteOrder.little.u32(b, at))
            at += 4
            guard n <= b.count - at else {
                throw MetascrubError.malformed(format: format, path: path, offset: origin + Int64(at - 4), reason: "length \(n) runs past the comment data")
            }
            return n
        }
        let vendorLength = try length()
        let vendor = Array(b[at..<at + vendorLength])
        at += vendorLength
        guard at + 4 <= b.count else {
            throw MetascrubError.truncated(format: format, path: path, offset: origin + Int64(at), needed: Int64(at + 4 - b.count))
        }
        let count = Int(ByteOrder.little.u32(b, at))
        at += 4
        guard count <= maxComments, count <= (b.count - at) / 4 else {
            throw MetascrubError.limitExceeded(format: format, path: path, offset: origin + Int64(at - 4), limit: "\(maxComments) comments that fit in the data")
        }
        var fields: [[UInt8]] = []
        for _ in 0..<count {
            let n = try length()
            fields.append(Array(b[at..<at + n]))
            at += n
        }
        return VorbisComment(vendor: vendor, fields: fields, end: at)
    }

    /// Field name in upper case (names are case-insensitive ASCII).
    static func name(_ field: [UInt8]) -> String {
        let end = field.firstIndex(of: 0x3D) ?? field.count
        return String(decoding: field[..<end], as: UTF8.self).uppercased()
    }

    static func category(_ name: String) -> Category {
        switch name {
        case "ARTIST", "PERFORMER", "COMPOSER", "COPYRIGHT", "ORGANIZATION", "LICENSE", "CONTACT", "ENCODED-BY", "ENCODEDBY",
             "ALBUMARTIST", "ALBUM ARTIST", "LYRICIST", "CONDUCTOR", "ARRANGER", "AUTHOR", "PRODUCER", "PUBLISHER", "LABEL",
             "ISRC", "ENGINEER", "MIXER", "REMIXER", "DJMIXER", "WRITER", "ARTISTSORT", "ALBUMARTISTSORT", "COMPOSERSORT":
            return .identity
        case "DATE", "YEAR", "ORIGINALDATE", "ORIGINALYEAR", "CREATION_TIME", "RELEASEDATE", "ENCODING_TIME", "TAGGING_TIME":
            return .time
        case "ENCODER", "ENCODING", "ENCODER_OPTIONS", "SOFTWARE", "TOOL": return .software
        case "METADATA_BLOCK_PICTURE", "COVERART", "COVERARTMIME", "COVERARTDESCRIPTION": return .embedded
        case "LOCATION": return .location
        default: return NameClassifier.category(of: name, otherwise: .content)
        }
    }

    /// Items: `vorbis:vendor` (software) when the vendor string is not empty, `vorbis:NAME` for each field.
    mutating func itemise(location: String, origin: Int64, options: ScanOptions, into items: inout [MetadataItem]) {
        if !vendor.isEmpty {
            items.append(MetadataItem(key: "vorbis:vendor", category: .software, location: "\(location)/vendor", offset: origin,
                                      length: Int64(vendor.count),
                                      value: options.includeValues ? String(String(decoding: vendor, as: UTF8.self).prefix(200)) : nil,
                                      detail: "encoder library vendor string"))
            vendorItem = items.count - 1
        }
        var seen: [String: Int] = [:]
        fieldItems = []
        for field in fields {
            let name = Self.name(field)
            seen[name, default: 0] += 1
            let picture = name == "METADATA_BLOCK_PICTURE" || name == "COVERART"
            var value: String?
            if options.includeValues && !picture, let eq = field.firstIndex(of: 0x3D) {
                value = String(String(decoding: field[(eq + 1)...], as: UTF8.self).prefix(200))
            }
            items.append(MetadataItem(key: "vorbis:\(name)", category: Self.category(name), location: "\(location)/\(name)#\(seen[name] ?? 1)",
                                      offset: origin, length: Int64(field.count), value: value,
                                      detail: picture ? "embedded picture (base64), \(field.count) bytes" : "Vorbis comment field"))
            fieldItems.append(items.count - 1)
            // A field is kept or dropped whole: a position written in its text decides it (base64 pictures are
            // embedded files, not text).
            if !picture {
                var notes: [Note] = []
                ContentInspector.inspect(field, origin: origin, parent: items.count - 1, options: options, items: &items, notes: &notes)
            }
        }
    }

    /// Whether the policy keeps everything that is there.
    func unchanged(keeps: (Int) -> Bool) -> Bool {
        (vendorItem.map(keeps) ?? true) && fieldItems.allSatisfy(keeps)
    }

    /// The list with only the kept fields; a removed vendor string becomes empty (the list stays valid).
    /// `cleaned`: picture fields kept with a cleaned picture (item → the picture's cleaned bytes).
    func rebuilt(keeps: (Int) -> Bool, cleaned: [Int: [UInt8]] = [:]) -> [UInt8] {
        let vendor = vendorItem.map(keeps) ?? true ? self.vendor : []
        let kept = fields.indices.compactMap { index -> [UInt8]? in
            guard index < fieldItems.count else { return nil }
            if let picture = cleaned[fieldItems[index]], let field = field(index, withPicture: picture, keeps: keeps) { return field }
            return keeps(fieldItems[index]) ? fields[index] : nil
        }
        var out = ByteOrder.little.bytes(UInt32(vendor.count)) + vendor + ByteOrder.little.bytes(UInt32(kept.count))
        for field in kept { out += ByteOrder.little.bytes(UInt32(field.count)) + field }
        return out
    }
}
