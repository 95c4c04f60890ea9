// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubNative

/// What the PNG scanner learned about each metadata chunk, kept for the cleaner.
public struct PNGLayout: Sendable {
    enum Content {
        /// The chunk stays exactly when this item is kept (text, tIME, iCCP, caBX, raw profiles, unknown chunks).
        case item(Int)
        /// An XMP iTXt: rebuilt with the kept properties.
        case xmp(packet: [UInt8], keys: [Int: String], keyword: String)
        /// eXIf: rebuilt with the kept entries.
        case exif(ExifPayload)
        /// ImageMagick's orNT orientation chunk: dropped once orientation is baked, else as its item says.
        case orientation(Int)
        /// iCCP: the profile stays with its item; its free-text name (an item of its own) may be replaced.
        /// Its text tags (`text`), when it has any, are blanked in place and the profile deflated again.
        case iccProfile(profile: Int, name: Int?, nameLength: Int, text: ICCTextEdit?)
        /// An image chunk whose data after its first `keep` bytes is an `unknown` item: slack after a fixed-size
        /// chunk's fields, bytes after the zlib stream in the last IDAT (`keep` 0: a whole chunk after it).
        case trimmed(item: Int, keep: Int64)
    }

    var structure: PNGStructure
    /// Chunk index → what it holds; chunks without an entry are image structure and always kept.
    var contents: [Int: Content] = [:]
    var trailerItem: Int?
    /// The (first) eXIf chunk, whose Orientation a viewer applies.
    var exif: ExifPayload?
    var exifChunk: Int?
}

/// Lists every metadata item of a PNG: text chunks by keyword (XMP, EXIF and ImageMagick raw profiles
/// itemised inside), eXIf entries, tIME, iCCP, C2PA, private chunks and bytes after IEND.
enum PNGScanner {
    /// Chunks a decoder needs to show the image as intended: never items, always kept.
    static let imageChunks: Set<String> = [
        "IHDR", "PLTE", "IDAT", "IEND", "tRNS", "gAMA", "cHRM", "sRGB", "cICP", "mDCv", "cLLi", "sBIT", "bKGD", "pHYs",
        "acTL", "fcTL", "fdAT", "hIST", "sTER", "oFFs",
    ]
    /// Image chunks of a fixed size: bytes after their fields are no field of theirs.
    static let fixedLength: [String: Int64] = ["pHYs": 9, "gAMA": 4, "cHRM": 32, "sRGB": 1, "oFFs": 9, "cICP": 4, "mDCv": 24,
                                               "cLLi": 8, "sTER": 1]
    static let xmpKeyword = "XML:com.adobe.xmp"
    /// What a removed iCCP profile name is replaced with (the name field cannot be empty).
    static let neutralProfileName = "ICC profile"
    /// Metadata chunks larger than this are not read into memory; they are one opaque item.
    static let parseLimit: Int64 = 64 << 20

    static func scan(_ source: any ByteSource, options: ScanOptions) throws -> ScanResult<PNGLayout> {
        let structure = try PNGStructure.parse(source)
        var layout = PNGLayout(structure: structure)
        var found = ItemCollector(options)
        var count: [String: Int] = [:]

        for (index, chunk) in structure.chunks.enumerated() {
            if let fields = fixedLength[chunk.type], chunk.length > fields, chunk.crcMatches {
                let slack = found.add("png:\(chunk.type)-slack", .content, location: "\(chunk.type)/slack", offset: chunk.dataOffset + fields,
                                      length: chunk.length - fields, detail: "\(chunk.length - fields) bytes after the \(chunk.type) fields",
                                      unknown: true)
                layout.contents[index] = .trimmed(item: slack, keep: fields)
                continue
            }
            if imageChunks.contains(chunk.type) && chunk.crcMatches { continue }
            count[chunk.type, default: 0] += 1
            let location = "\(chunk.type)#\(count[chunk.type]!)"
            func add(_ key: String, _ category: Category, value: String? = nil, detail: String? = nil, unknown: Bool = false) -> Int {
                found.add(key, category, location: location, offset: chunk.offset, length: chunk.totalLength, value: value, detail: detail,
                          unknown: unknown)
            }
            guard chunk.isAncillary else {
                throw MetascrubError.unsupported(format: "PNG", reason: "unknown critical chunk \(chunk.type) at offset \(chunk.offset); decoders refuse it")
            }
            guard chunk.crcMatches else {
                found.notes.append(Note(.warning, code: "crc-mismatch", "\(chunk.type) chunk has a bad CRC; its contents are not trusted (decoders ignore it)",
                                  offset: chunk.offset))
                layout.contents[index] = .item(add("png:chunk:\(chunk.type)", .content, detail: "\(chunk.type) chunk with a bad CRC", unknown: true))
                continue
            }
            guard chunk.length <= parseLimit || !["tEXt", "zTXt", "iTXt", "eXIf"].contains(chunk.type) else {
                found.notes.append(Note(.warning, code: "chunk-too-large", "\(chunk.type) chunk of \(chunk.length) bytes is not parsed; treated as one block",
                                  offset: chunk.offset))
                layout.contents[index] = .item(add("png:chunk:\(chunk.type)", .content, detail: "\(chunk.length)-byte \(chunk.type) chunk", unknown: true))
                continue
            }
            switch chunk.type {
            case "tEXt", "zTXt", "iTXt":
                let data = try source.read(at: chunk.dataOffset, count: Int(chunk.length))
                guard let text = PNGText.parse(type: chunk.type, data: data) else {
                    found.notes.append(Note(.warning, code: "text-malformed", "\(chunk.type) chunk does not have the fields its type requires", offset: chunk.offset))
                    layout.contents[index] = .item(add("png:chunk:\(chunk.type)", .content, detail: "malformed text chunk", unknown: true))
                    continue
                }
                if text.keyword == xmpKeyword {
                    layout.contents[index] = xmp(text, chunk: chunk, location: location, options: options, found: &found)
                } else if text.keyword.hasPrefix(RawProfile.keywordPrefix) {
                    layout.contents[index] = .item(rawProfile(text, chunk: chunk, location: location, options: options, found: &found))
                } else {
                    let category = NameClassifier.category(of: text.keyword, otherwise: .content)
                    let item = add("png:text:\(text.keyword)", category, value: options.includeValues ? text.value() : nil,
                                   detail: "\(chunk.type) text\(text.compressed ? ", compressed" : "")")
                    layout.contents[index] = .item(item)
                    // Kept or dropped whole: a position or a metadata block in the text decides it, and so does one in
                    // its other fields (an iTXt's language tag and translated keyword are free text too).
                    found.inspect(item, payload: Array(data.prefix(data.count - text.stored.count)), origin: chunk.dataOffset)
                    // Read whole: a position after the first MiB of a compressed text is as much there as one before.
                    // Text that does not inflate within the limit cannot be read, so it cannot be kept either.
                    if let inflated = try? text.text(limit: PNGText.packetLimit) {
                        found.inspectWhole(item, payload: inflated, origin: chunk.dataOffset)
                    } else {
                        found.items[item].isUnknown = true
                        let what = "\(chunk.type) text \(text.keyword) does not inflate within "
                            + "\(PNGText.packetLimit) bytes"
                        found.notes.append(Note(.warning, code: "inflate-refused", what + "; removed unread",
                                                offset: chunk.offset))
                    }
                }
            case "eXIf":
                let data = try source.read(at: chunk.dataOffset, count: Int(chunk.length))
                layout.addExifChunk(index, data, origin: chunk.dataOffset, location: location, into: &found)
            case "tIME":
                layout.contents[index] = .item(add("png:tIME", .time, detail: "last-modification time"))
            case "iCCP":
                let head = try source.read(at: chunk.dataOffset, count: Int(min(chunk.length, 80)))
                guard let nul = head.firstIndex(of: 0), nul >= 1 else {
                    layout.contents[index] = .item(add("png:chunk:iCCP", .rendering, detail: "iCCP without a profile name", unknown: true))
                    continue
                }
                let name = PNGText.latin1(head[..<nul])
                let profile = add("icc:profile", .rendering, detail: "ICC profile (iCCP), \(chunk.length) bytes compressed")
                // The name is a free-text label decoders ignore (ExifTool shows it as PNG:ProfileName).
                let label = name == PNGScanner.neutralProfileName ? nil
                    : add("png:iCCP:name", .content, value: name, detail: "label of the embedded ICC profile")
                let text = try PNGScanner.iccText(source, chunk, nameLength: nul, profileItem: profile, location: location,
                                                  into: &found)
                layout.contents[index] = .iccProfile(profile: profile, name: label, nameLength: nul, text: text)
            case "pCAL", "sCAL":
                // Calibration and scale: a name, a unit and numbers, all free text no decoder displays.
                let data = try source.read(at: chunk.dataOffset, count: Int(min(chunk.length, 200)))
                let name = chunk.type == "pCAL" ? PNGText.latin1(data.prefix { $0 != 0 }) : nil
                let what = chunk.type == "pCAL" ? "pixel calibration (name, unit, parameters)"
                    : "physical scale (unit, width and height as text)"
                layout.contents[index] = .item(add("png:\(chunk.type)", .content, value: options.includeValues ? name : nil,
                                                   detail: what))
            case "caBX":
                let store = add("jumbf:c2pa", .provenance, detail: "C2PA manifest store (caBX)")
                layout.contents[index] = .item(store)
                if chunk.length <= JPEGJUMBF.maxBox {
                    try found.c2pa(try source.read(at: chunk.dataOffset, count: Int(chunk.length)), store: store,
                                   placement: .contiguous(chunk.dataOffset), source: source)
                } else {
                    found.unread(store, "larger than \(JPEGJUMBF.maxBox) bytes")
                }
            case "orNT":
                layout.contents[index] = .orientation(add("png:orNT", .rendering, detail: "ImageMagick orientation chunk"))
            default:
                let category = NameClassifier.category(of: chunk.type, otherwise: .content)
                layout.contents[index] = .item(add("png:chunk:\(chunk.type)", category, detail: "private or unknown ancillary chunk, \(chunk.length) bytes",
                                                   unknown: true))
            }
        }
        try streamTail(source, structure, &layout, &found)
        if let trailer = structure.trailer {
            var item = try Trailer.item(key: "png:trailer", range: trailer, in: source, location: "after IEND", after: "IEND")
            // An editor that overwrote a longer file in place leaves the original's tail here (CVE-2023-21036).
            item.detail = (item.detail ?? "") + " (aCropalypse risk: may hold part of an un-cropped original)"
            found.items.append(item)
            layout.trailerItem = found.items.count - 1
        }
        return found.result(layout)
    }

    /// Bytes after the end of the zlib stream the IDAT chunks hold: an `unknown` item (decoders stop at the
    /// stream's end). Found by inflating the stream into nothing; a stream that does not end is the decoder's
    /// problem and the content check's, not an item.
    static func streamTail(_ source: any ByteSource, _ structure: PNGStructure, _ layout: inout PNGLayout,
                           _ found: inout ItemCollector) throws {
        let idats = structure.chunks.indices.filter {
            structure.chunks[$0].type == "IDAT" && layout.contents[$0] == nil
        }
        guard !idats.isEmpty else { return }
        var next = 0
        guard let length = try? Zlib.streamLength({ () throws -> [UInt8]? in
            guard next < idats.count else { return nil }
            let chunk = structure.chunks[idats[next]]
            next += 1
            return try source.read(at: chunk.dataOffset, count: Int(chunk.length))
        }) else { return }
        var before: Int64 = 0
        var item: Int?
        for index in idats {
            let chunk = structure.chunks[index]
            let keep = max(0, min(chunk.length, Int64(length) - before))
            before += chunk.length
            guard keep < chunk.length else { continue }
            if item == nil {
                let tail = chunk.dataOffset + keep
                let count = structure.chunks[idats.last!].end - 4 - tail
                item = found.add("png:IDAT-tail", .content, location: "IDAT/after the zlib stream", offset: tail,
                                 length: count,
                                 detail: "bytes after the end of the image's zlib stream", unknown: true)
            }
            layout.contents[index] = .trimmed(item: item!, keep: keep)
        }
    }

    private static func xmp(
        _ text: PNGText, chunk: PNGStructure.Chunk, location: String, options: ScanOptions,
        found: inout ItemCollector
    ) -> PNGLayout.Content {
        do {
            let packet = try text.text(limit: PNGText.packetLimit)
            let keys = found.xmp(packet, location: "\(location)/XMP", origin: chunk.dataOffset)
            return .xmp(packet: packet, keys: keys, keyword: text.keyword)
        } catch {
            found.notes.append(Note(.warning, code: "inflate-refused", "XMP packet not inflated: \(error); treated as one block", offset: chunk.offset))
            found.items.append(MetadataItem(key: "xmp:packet", category: .content, location: "\(location)/XMP", offset: chunk.offset,
                                      length: chunk.totalLength, detail: "compressed XMP packet that could not be inflated", isUnknown: true))
            return .item(found.items.count - 1)
        }
    }

    /// One atomic item for the chunk, with the decoded profile's contents listed as its children.
    private static func rawProfile(
        _ text: PNGText, chunk: PNGStructure.Chunk, location: String, options: ScanOptions,
        found: inout ItemCollector
    ) -> Int {
        let name = String(text.keyword.dropFirst(RawProfile.keywordPrefix.count))
        found.items.append(MetadataItem(key: "png:text:\(text.keyword)", category: RawProfile.category(name), location: location,
                                  offset: chunk.offset, length: chunk.totalLength, detail: "ImageMagick raw \(name) profile (hex text)"))
        let parent = found.items.count - 1
        let profile: [UInt8]
        do {
            guard let decoded = RawProfile.decode(try text.text(limit: PNGText.packetLimit)) else {
                found.notes.append(Note(.warning, code: "raw-profile-undecoded", "raw \(name) profile is not in ImageMagick's hex layout; treated as one block",
                                  offset: chunk.offset))
                found.items[parent].isUnknown = true
                return parent
            }
            profile = decoded
        } catch {
            found.notes.append(Note(.warning, code: "inflate-refused", "raw \(name) profile not inflated: \(error); treated as one block", offset: chunk.offset))
            found.items[parent].isUnknown = true
            return parent
        }
        let first = found.items.count
        let inner = "\(location)/\(name)"
        switch name.lowercased() {
        case "exif", "app1":
            _ = found.exif(profile, location: inner, origin: chunk.dataOffset)
        case "xmp":
            _ = found.xmp(profile, location: inner, origin: chunk.dataOffset)
        case "iptc", "8bim":
            found.lists { items, notes in
                PhotoshopItems.itemise(irbOrIPTC: profile, origin: chunk.dataOffset, location: inner, options: options, into: &items, notes: &notes)
            }
        case "icc", "icm":
            found.items.append(MetadataItem(key: "icc:profile", category: .rendering, location: inner, offset: chunk.offset, length: Int64(profile.count),
                                      detail: "ICC profile, \(profile.count) bytes"))
        default:
            found.items[parent].isUnknown = true
        }
        for i in first..<found.items.count where found.items[i].parent == nil { found.items[i].parent = parent }
        return parent
    }
}
