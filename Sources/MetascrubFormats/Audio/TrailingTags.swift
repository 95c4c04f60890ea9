// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// Tags appended after the audio of MP3 (and sometimes FLAC) files, found by peeling them off the end:
/// ID3v1 (128 bytes "TAG") and Enhanced TAG+ (227 bytes), APEv1/APEv2 (32-byte "APETAGEX" footer, optional
/// header), Lyrics3 v1/v2, and an appended ID3v2.4 tag (found by its "3DI" footer).
struct TrailingTags {
    static let maxTags = 16

    enum Kind { case id3v1, enhancedTag, ape, lyrics3, id3v2(ID3Tag) }

    struct Tag {
        var kind: Kind
        var range: Range<Int64>
        /// The item that stands for the whole tag (removed when any item inside it is).
        var item: Int = -1
    }

    /// Tags in file order; `start` is where the first of them begins (the end of the audio).
    var tags: [Tag] = []
    var start: Int64

    static func find(_ source: any ByteSource, audioStart: Int64, format: String) throws -> TrailingTags {
        var end = source.size
        var found: [Tag] = []
        func ascii(_ at: Int64, _ text: String) throws -> Bool {
            let n = text.utf8.count
            guard at >= audioStart, at + Int64(n) <= source.size else { return false }
            return try source.read(at: at, count: n).elementsEqual(text.utf8)
        }
        while found.count < maxTags {
            if try ascii(end - 128, "TAG") {
                found.append(Tag(kind: .id3v1, range: end - 128..<end))
                end -= 128
                if try ascii(end - 227, "TAG+") {
                    found.append(Tag(kind: .enhancedTag, range: end - 227..<end))
                    end -= 227
                }
                continue
            }
            if try ascii(end - 32, "APETAGEX") {
                let footer = try source.read(at: end - 32, count: 32)
                let size = Int64(ByteOrder.little.u32(footer, 12))
                let hasHeader = ByteOrder.little.u32(footer, 20) & 0x8000_0000 != 0
                let start = end - size - (hasHeader ? 32 : 0)
                guard size >= 32, start >= audioStart else {
                    throw MetascrubError.malformed(format: format, path: "APE tag", offset: end - 32, reason: "tag size \(size) reaches before the audio")
                }
                found.append(Tag(kind: .ape, range: start..<end))
                end = start
                continue
            }
            if try ascii(end - 9, "LYRICS200") {
                let digits = try source.read(at: end - 15, count: 6)
                guard digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                    throw MetascrubError.malformed(format: format, path: "Lyrics3v2 tag", offset: end - 15, reason: "size is not six digits")
                }
                let size = Int64(digits.reduce(0) { $0 * 10 + Int($1 - 0x30) })
                let start = end - 15 - size
                guard try ascii(start, "LYRICSBEGIN") else {
                    throw MetascrubError.malformed(format: format, path: "Lyrics3v2 tag", offset: end - 15, reason: "no LYRICSBEGIN where its size points")
                }
                found.append(Tag(kind: .lyrics3, range: start..<end))
                end = start
                continue
            }
            if try ascii(end - 9, "LYRICSEND") {
                // Lyrics3 v1 has no size: its start marker is at most 5100 bytes before the end marker.
                let window = min(end - 9 - audioStart, 5100 + 11)
                let bytes = try source.read(at: end - 9 - window, count: Int(window))
                let marker = Array("LYRICSBEGIN".utf8)
                var at = bytes.count - marker.count
                while at >= 0 && !bytes[at..<at + marker.count].elementsEqual(marker) { at -= 1 }
                guard at >= 0 else {
                    throw MetascrubError.malformed(format: format, path: "Lyrics3 tag", offset: end - 9, reason: "no LYRICSBEGIN before LYRICSEND")
                }
                let start = end - 9 - window + Int64(at)
                found.append(Tag(kind: .lyrics3, range: start..<end))
                end = start
                continue
            }
            if try ascii(end - 10, "3DI") {
                let footer = try source.read(at: end - 10, count: 10)
                guard footer[6...9].allSatisfy({ $0 < 0x80 }) else { break }
                let start = end - 20 - Int64(ID3Tag.syncsafe(footer, 6))
                guard start >= audioStart else {
                    throw MetascrubError.malformed(format: format, path: "appended ID3v2 tag", offset: end - 10, reason: "tag size reaches before the audio")
                }
                let tag = try ID3Tag.parse(source, at: start, end: end, format: format, path: "appended ID3v2 tag")
                found.append(Tag(kind: .id3v2(tag), range: start..<end))
                end = start
                continue
            }
            break
        }
        return TrailingTags(tags: found.reversed(), start: end)
    }

    /// Items for every tag; each tag's own item is the parent of the items found inside it. The text of ID3v1,
    /// Enhanced TAG+ and Lyrics3 tags and of APE text items is read like any tag's (`ContentInspector`): a
    /// position or an embedded block in it is an item inside the tag.
    mutating func itemise(_ source: any ByteSource, into found: inout ItemCollector) throws {
        let options = found.options
        for index in tags.indices {
            let tag = tags[index]
            let length = Int64(tag.range.count)
            switch tag.kind {
            case .id3v1, .enhancedTag:
                let bytes = try source.read(at: tag.range.lowerBound, count: Int(length))
                let plus = if case .enhancedTag = tag.kind { true } else { false }
                var value: String?
                if options.includeValues {
                    // title, artist, album (30 bytes each; 60 in TAG+)
                    let fields = plus ? [(4, 60), (64, 60), (124, 60)] : [(3, 30), (33, 30), (63, 30)]
                    value = fields.map {
                        ID3Frames.latin1(bytes[$0.0..<$0.0 + $0.1]).replacingNulls.trimmingSuffixSpaces
                    }.filter { !$0.isEmpty }.joined(separator: "; ")
                }
                found.items.append(MetadataItem(
                    key: plus ? "id3v1:enhanced" : "id3v1:tag", category: .content,
                    location: plus ? "Enhanced TAG+" : "ID3v1", offset: tag.range.lowerBound, length: length,
                    value: value, detail: plus ? "Enhanced TAG+ block (title, artist, album, genre, times)"
                        : "ID3v1 tag (title, artist, album, year, comment, genre)"))
                tags[index].item = found.items.count - 1
                found.inspect(found.items.count - 1, payload: bytes, origin: tag.range.lowerBound)
            case .ape:
                found.items.append(MetadataItem(key: "ape:tag", category: .structure, location: "APE",
                                                offset: tag.range.lowerBound, length: length,
                                                detail: "APE tag, \(length) bytes"))
                tags[index].item = found.items.count - 1
                let parent = found.items.count - 1
                let before = found.items.count
                try APETag.itemise(source, range: tag.range, parent: parent, into: &found)
                // An APE tag with no readable items still goes under strict: it is then content, not structure.
                if found.items.count == before { found.items[parent].category = .content }
            case .lyrics3:
                found.items.append(MetadataItem(key: "lyrics3:tag", category: .content, location: "Lyrics3",
                                                offset: tag.range.lowerBound, length: length,
                                                detail: "Lyrics3 tag, \(length) bytes"))
                tags[index].item = found.items.count - 1
                let bytes = try source.read(at: tag.range.lowerBound,
                                            count: Int(min(length, Int64(ContentInspector.limit))))
                found.inspect(found.items.count - 1, payload: bytes, origin: tag.range.lowerBound)
            case .id3v2(var id3):
                found.items.append(MetadataItem(key: "id3:tag", category: .structure, location: "appended ID3v2",
                                                offset: tag.range.lowerBound, length: length,
                                                detail: "ID3v2.\(id3.major) tag appended after the audio"))
                let parent = found.items.count - 1
                tags[index].item = parent
                let first = found.items.count
                id3.itemise(location: "appended ID3v2", options: options, into: &found.items)
                for i in first..<found.items.count { found.items[i].parent = parent }
                if found.items.count == first { found.items[parent].category = .content }
                tags[index].kind = .id3v2(id3)
            }
        }
    }
}

/// APEv1/APEv2 items (key, value, flags) inside a tag found by `TrailingTags`.
enum APETag {
    static let maxItems = 4096

    static func category(_ key: String) -> Category {
        switch key.lowercased() {
        case "artist", "album artist", "albumartist", "composer", "conductor", "copyright", "publisher", "publicationright",
             "lyricist", "performer", "label", "isrc", "ean/upc", "isbn", "lc": return .identity
        case "year", "record date", "recorddate", "date", "original date": return .time
        case "tool name", "tool version", "encoder", "encodedby", "encoded by": return .software
        case "record location", "location": return .location
        default:
            if key.lowercased().hasPrefix("cover art") { return .embedded }
            return NameClassifier.category(of: key, otherwise: .content)
        }
    }

    static func itemise(_ source: any ByteSource, range: Range<Int64>, parent: Int,
                        into found: inout ItemCollector) throws {
        let options = found.options
        let footer = try source.read(at: range.upperBound - 32, count: 32)
        let count = Int(ByteOrder.little.u32(footer, 16))
        let size = Int(ByteOrder.little.u32(footer, 12))
        guard size <= 16 << 20 else { return }
        let data = try source.read(at: range.upperBound - Int64(size), count: size - 32)
        var at = 0
        for _ in 0..<min(count, maxItems) {
            guard at + 8 < data.count else { break }
            let length = Int(ByteOrder.little.u32(data, at)), flags = ByteOrder.little.u32(data, at + 4)
            var keyEnd = at + 8
            while keyEnd < data.count && data[keyEnd] != 0 { keyEnd += 1 }
            guard keyEnd < data.count, length >= 0, keyEnd + 1 + length <= data.count else { break }
            let key = String(decoding: data[(at + 8)..<keyEnd], as: UTF8.self)
            let binary = (flags >> 1) & 3 == 1
            let value = options.includeValues && !binary
                ? String(String(decoding: data[(keyEnd + 1)..<(keyEnd + 1 + length)], as: UTF8.self).prefix(200)) : nil
            found.items.append(MetadataItem(
                key: "ape:\(key)", category: binary ? .embedded : category(key), location: "APE/\(key)",
                offset: range.lowerBound, length: Int64(length), value: value,
                detail: binary ? "APE binary item, \(length) bytes" : "APE text item", parent: parent))
            if !binary {
                // Its text, where it lies in the file: the item's own offset is the tag's.
                found.inspect(found.items.count - 1, payload: Array(data[(keyEnd + 1)..<(keyEnd + 1 + length)]),
                              origin: range.upperBound - Int64(size) + Int64(keyEnd + 1))
            }
            at = keyEnd + 1 + length
        }
    }
}
