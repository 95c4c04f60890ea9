// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// Lists every metadata item of a HEIF/AVIF file: Exif and XMP items (entry by entry), thumbnails, auxiliary
/// and secondary images, metadata-bearing properties, motion-photo and C2PA boxes, unknown boxes, bytes no
/// item refers to, and bytes after the last box.
enum HEIFScanner {
    /// Largest Exif/XMP item read into memory.
    static let metadataLimit = 64 << 20
    /// Boxes and gaps up to this size are read to tell zero padding from leftover data.
    static let paddingCheckLimit: Int64 = 16 << 20

    /// Properties that describe how to decode or display an image: structure, never listed as metadata.
    static let imageProperties: Set<FourCC> = [
        "ispe", "pixi", "hvcC", "av1C", "irot", "imir", "clap", "auxC", "rloc", "lsel", "pasp", "clli", "mdcv", "cclv",
        "amve", "a1op", "a1lx", "lhvC", "oinf", "tols", "jpgC", "vvcC", "uncC", "cmpd", "cmpC", "icef", "altt", "iscl",
        "reve", "ndwt", "colr", "free", "skip", "avcC", "j2kH", "ccst", "cpal", "splz", "sbpm", "snuc", "cloc", "jxlC",
    ]
    /// `meta` children the rewrite understands or copies as structure.
    static let metaStructure: Set<FourCC> = ["hdlr", "dinf", "pitm", "iinf", "iloc", "iref", "iprp", "idat", "grpl", "ipro", "ipmc", "fiin"]

    static func scan(_ source: any ByteSource, format: String, options: ScanOptions) throws -> ScanResult<HEIFLayout> {
        let reader = BoxReader(source, format: format)
        var found = ItemCollector(options)
        let listing = try found.topLevel(reader)
        let top = listing.boxes
        guard top.first?.type == "ftyp" else {
            throw MetascrubError.malformed(format: format, path: "ftyp", offset: 0, reason: "the file does not start with a file type box")
        }
        let metas = top.indices.filter { top[$0].type == "meta" }
        guard let metaIndex = metas.first else {
            if top.contains(where: { $0.type == "moov" }) {
                throw MetascrubError.unsupported(format: format, reason: "image sequences without items (tracks only) are not supported yet")
            }
            throw MetascrubError.malformed(format: format, path: "meta", offset: 0, reason: "no meta box")
        }
        guard metas.count == 1 else {
            throw MetascrubError.malformed(format: format, path: "meta", offset: top[metas[1]].offset, reason: "more than one top-level meta box")
        }
        let meta = try HEIFMeta.parse(top[metaIndex], reader: reader)
        var layout = HEIFLayout(format: format, top: top, trailer: listing.leftover, metaIndex: metaIndex, meta: meta)
        layout.hasMovie = top.contains { $0.type == "moov" }
        guard meta.item(meta.primaryID) != nil else {
            throw MetascrubError.malformed(format: format, path: "meta/pitm", offset: meta.box.offset, reason: "the primary item \(meta.primaryID) is not described in iinf")
        }

        // Cut inside its last `mdat` (or a cleaned copy of such a file, whose `mdat` header says where the file ends):
        // items may run past the end, which the policy's `damaged: clean` accepts for coded image data only.
        let cut = options.tolerateDamage && top.last.map { $0.type == "mdat" && $0.end == source.size } == true
        for entry in meta.locations?.entries ?? [] {
            guard let data = try ItemData.resolve(entry, meta: meta, fileSize: source.size, format: format, tolerateCut: cut) else { continue }
            if let missing = data.ranges.first(where: { $0.upperBound > source.size }) {
                // Only coded image data may lie in the missing part: it is copied as far as it goes. An Exif,
                // XMP or other item there could hold metadata nobody can see or remove.
                guard meta.item(entry.itemID)?.isImage == true else {
                    throw MetascrubError.truncated(format: format, path: "meta/iloc/item \(entry.itemID)", offset: missing.lowerBound,
                                                   needed: missing.upperBound - source.size)
                }
                found.notes.append(Note(.warning, code: "damaged-input",
                                        "damaged input at byte \(max(missing.lowerBound, source.size)): image item \(entry.itemID)'s coded data runs past the end of the file; the part that is there is copied and compared, the rest cannot be verified",
                                        offset: max(missing.lowerBound, source.size)))
            }
            layout.data[entry.itemID] = data
            guard data.constructionMethod == 0 else { continue }
            for range in data.ranges where !range.isEmpty {
                if let holder = boxIndex(holding: range.lowerBound, in: top), holder != metaIndex, holder != 0 {
                    layout.dataBoxes.insert(holder)
                }
            }
        }

        try readPropertySummaries(reader, &layout)
        classifyItems(&layout)
        try itemiseItems(source, &layout, options: options, found: &found)
        let options = found.options
        try found.lists { items, notes in try itemiseProperties(reader, &layout, options: options, items: &items, notes: &notes) }
        try itemiseMetaChildren(reader, &layout, items: &found.items)
        try itemiseStructureText(reader, &layout, found: &found)
        try itemiseTopLevel(reader, &layout, options: options, found: &found)
        if layout.hasMovie {
            found.notes.append(Note(.warning, code: "heif-sequence", "the file also holds image-sequence tracks (moov); cleaning it is not supported yet"))
        }
        return found.result(layout)
    }

    /// The top-level box whose payload holds `offset` (boxes are in file order, so a binary search).
    static func boxIndex(holding offset: Int64, in top: [Box]) -> Int? {
        var lo = 0, hi = top.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if top[mid].end <= offset { lo = mid + 1 } else { hi = mid }
        }
        return lo < top.count && top[lo].payloadRange.contains(offset) ? lo : nil
    }

    // MARK: - Items

    static func classifyItems(_ layout: inout HEIFLayout) {
        let refs = layout.meta.links
        let inputs = Set(layout.meta.references.references.filter { $0.type == ItemReferenceBox.derivedImage }.flatMap(\.to))
        for item in layout.meta.items {
            let role: HEIFItemRole
            if item.id == layout.primaryID {
                role = .primary
            } else if item.type == HEIFItem.exif || item.isXMP {
                role = .metadata
            } else if !refs.targets(of: item.id, ItemReferenceBox.thumbnail).isEmpty {
                role = .thumbnail
            } else if !refs.targets(of: item.id, ItemReferenceBox.auxiliary).isEmpty {
                let urn = layout.auxiliaryType(of: item.id) ?? ""
                role = .auxiliary(AuxiliaryKind(urn: urn))
            } else if item.type == "tmap" {
                role = .toneMap
            } else if inputs.contains(item.id) {
                role = .input
            } else if item.isImage {
                role = .image
            } else {
                role = .other
            }
            layout.roles[item.id] = role
        }
    }

    static func itemiseItems(
        _ source: any ByteSource, _ layout: inout HEIFLayout, options: ScanOptions, found: inout ItemCollector
    ) throws {
        let meta = layout.meta
        for item in meta.items {
            guard let role = layout.roles[item.id] else { continue }
            let data = layout.data[item.id]
            let location = "meta/iinf/item \(item.id) (\(item.isXMP ? "XMP" : item.type.description.trimmingWhitespace))"
            func add(_ key: String, _ category: Category, _ detail: String, unknown: Bool = false) {
                found.items.append(MetadataItem(key: key, category: category, location: location, offset: data?.ranges.first?.lowerBound,
                                          length: data?.length, detail: detail, isUnknown: unknown))
                layout.itemOwner[item.id] = found.items.count - 1
            }
            let shape = imageShape(item, layout)
            switch role {
            case .primary:
                add("heif:primary", .structure, "primary image: item \(item.id), \(shape)")
            case .metadata:
                guard let data else {
                    let key = item.type == HEIFItem.exif ? "exif:block" : "xmp:packet"
                    add(key, item.type == HEIFItem.exif ? .device : .content, "metadata item stored outside this file", unknown: true)
                    continue
                }
                guard data.length <= Int64(metadataLimit) else {
                    throw MetascrubError.limitExceeded(format: layout.format, path: location, offset: data.ranges.first?.lowerBound ?? 0,
                                                       limit: "\(metadataLimit) bytes per metadata item")
                }
                var record: [UInt8] = []
                for range in data.ranges { record += try source.read(at: range.lowerBound, count: Int(range.count), format: layout.format, path: location) }
                let origin = data.ranges.first?.lowerBound ?? 0
                let first = found.items.count
                let exif = item.type == HEIFItem.exif
                layout.embedded[item.id] = found.lists { items, notes in
                    exif ? EmbeddedMetadata.exifRecord(record, origin: origin, location: location, options: options, into: &items, notes: &notes)
                        : EmbeddedMetadata.xmpRecord(record, origin: origin, location: location, options: options, into: &items, notes: &notes)
                }
                if found.items.count > first, case .opaque(let only)? = layout.embedded[item.id] { layout.itemOwner[item.id] = only }
            case .thumbnail:
                add("heif:thumbnail", .embedded, "thumbnail image: item \(item.id), \(shape)")
            case .auxiliary(let kind):
                let urn = layout.auxiliaryType(of: item.id).map { String($0.prefix(80)) } ?? "no auxC type"
                add("heif:auxiliary:\(kind.rawValue)", kind == .alpha ? .rendering : .embedded, "auxiliary image (\(urn)): item \(item.id), \(shape)")
            case .toneMap:
                add("heif:tonemap", .embedded, "tone-mapped HDR rendition (tmap, gain map applied): item \(item.id)")
            case .image:
                add("heif:image", .embedded, "secondary image: item \(item.id), \(shape)")
            case .input:
                continue
            case .other:
                if item.type == HEIFItem.mime {
                    let type = (item.contentType ?? "").trimmingWhitespace
                    add("heif:mime", NameClassifier.category(of: type, otherwise: .content),
                        "mime item (\(type.isEmpty ? "no content type" : String(type.prefix(60)))\((item.contentEncoding ?? "").isEmpty ? "" : ", encoded"))", unknown: true)
                } else if item.type == HEIFItem.uri {
                    add("heif:uri", .content, "uri item", unknown: true)
                } else {
                    add("heif:item:\(item.type.description.trimmingWhitespace)", .content, "item \(item.id) of type \(item.type)", unknown: true)
                }
            }
        }
    }

    /// "hvc1 4032×3024" or "grid 4032×3024 of 48 tiles".
    static func imageShape(_ item: HEIFItem, _ layout: HEIFLayout) -> String {
        var text = item.type.description.trimmingWhitespace
        if let size = layout.imageSize(of: item.id) { text += " \(size.width)×\(size.height)" }
        let inputs = layout.meta.links.targets(of: item.id, ItemReferenceBox.derivedImage)
        if !inputs.isEmpty { text += " of \(inputs.count) input\(inputs.count == 1 ? "" : "s")" }
        return text
    }

    // MARK: - Properties

    static func readPropertySummaries(_ reader: BoxReader, _ layout: inout HEIFLayout) throws {
        for (i, property) in layout.meta.properties.enumerated() {
            let index = i + 1
            switch property.type {
            case "auxC":
                let payload = try reader.source.read(at: property.payloadOffset, count: Int(min(property.payloadSize, 1024)),
                                                     format: reader.format, path: property.path)
                var c = ByteCursor(payload, origin: property.payloadOffset, format: reader.format, path: property.path)
                _ = try c.fullBoxHeader()
                layout.auxiliaryTypes[index] = try c.cString("aux_type")
            case "ispe":
                var c = ByteCursor(try reader.payload(of: property), origin: property.payloadOffset, format: reader.format, path: property.path)
                _ = try c.fullBoxHeader()
                layout.imageSizes[index] = (try c.u32("image_width"), try c.u32("image_height"))
            case "colr" where property.payloadSize >= 4:
                layout.colourTypes[index] = FourCC(bytes: try reader.source.read(at: property.payloadOffset, count: 4))
            default:
                continue
            }
        }
    }

    static func itemiseProperties(_ reader: BoxReader, _ layout: inout HEIFLayout, options: ScanOptions,
                                  items: inout [MetadataItem], notes: inout [Note]) throws {
        for (i, property) in layout.meta.properties.enumerated() {
            let index = i + 1
            func add(_ key: String, _ category: Category, _ detail: String, unknown: Bool = false) {
                items.append(MetadataItem(key: key, category: category, location: "meta/iprp/ipco/\(property.type)#\(index)",
                                          offset: property.offset, length: property.size, detail: detail, isUnknown: unknown))
                layout.propertyOwner[index] = items.count - 1
            }
            switch property.type {
            case "colr":
                if let kind = layout.colourTypes[index], kind == "prof" || kind == "rICC" {
                    add("icc:profile", .rendering, "ICC profile, \(property.payloadSize - 4) bytes (colr \(kind))")
                }
            case "udes":
                add("heif:udes", .content, "user description property (name, description, tags)")
                // Kept where content is kept (`location`): its free text is read for positions like any description.
                let text = try reader.source.read(at: property.payloadOffset, count: Int(min(property.payloadSize, Int64(ContentInspector.limit))),
                                                  format: reader.format, path: property.path)
                ContentInspector.inspect(text, origin: property.payloadOffset, parent: items.count - 1, options: options,
                                         items: &items, notes: &notes)
            case "crtt":
                add("heif:crtt", .time, "creation time property")
            case "mdft":
                add("heif:mdft", .time, "modification time property")
            case "uuid":
                add("heif:property:uuid", .content, "vendor property \(BoxUUID.hex(property.extendedType ?? []))", unknown: true)
            default:
                if imageProperties.contains(property.type) { continue }
                add("heif:property:\(property.type.description.trimmingWhitespace)", .content, "unknown item property", unknown: true)
            }
        }
    }

    // MARK: - Boxes

    static func itemiseMetaChildren(_ reader: BoxReader, _ layout: inout HEIFLayout, items: inout [MetadataItem]) throws {
        for (i, child) in layout.meta.children.enumerated() where !metaStructure.contains(child.type) {
            func add(_ key: String, _ category: Category, _ detail: String) {
                items.append(MetadataItem(key: key, category: category, location: child.path, offset: child.offset, length: child.size,
                                          detail: detail, isUnknown: true))
                layout.metaChildOwner[i] = items.count - 1
            }
            switch child.type {
            case "xml ", "bxml":
                add("heif:xml", .content, "XML metadata box in meta, \(child.payloadSize) bytes")
            case "free", "skip":
                if try !isZero(reader.source, child.payloadRange) {
                    add("heif:free", .content, "free space in meta holding \(child.payloadSize) bytes of old data")
                }
            default:
                add("heif:box:meta/\(child.type.description.trimmingWhitespace)", .content, "unknown box in meta")
            }
        }
    }

    static func itemiseTopLevel(
        _ reader: BoxReader, _ layout: inout HEIFLayout, options: ScanOptions, found: inout ItemCollector
    ) throws {
        let source = reader.source
        let dataBoxes = layout.dataBoxes
        let fileRanges = layout.data.values.filter { $0.constructionMethod == 0 }.flatMap(\.ranges)
        for (i, box) in layout.top.enumerated() where i != layout.metaIndex && !(i == 0 && box.type == "ftyp") {
            func add(_ key: String, _ category: Category, _ detail: String, unknown: Bool = false) {
                found.items.append(MetadataItem(key: key, category: category, location: "\(box.type)@\(box.offset)", offset: box.offset,
                                          length: box.size, detail: detail, isUnknown: unknown))
                layout.boxOwner[i] = found.items.count - 1
            }
            if dataBoxes.contains(i) {
                // Bytes in a data box that no item refers to: padding, or what an earlier editor left behind.
                for gap in ByteSplice.subtract([box.payloadRange], fileRanges) {
                    if try isZero(source, gap) {
                        layout.unreferenced.append((gap, nil))
                    } else {
                        found.items.append(MetadataItem(key: "heif:unreferenced", category: .content, location: "\(box.type)@\(box.offset)",
                                                  offset: gap.lowerBound, length: Int64(gap.count),
                                                  detail: "\(gap.count) bytes in \(box.type) that no item refers to", isUnknown: true))
                        layout.unreferenced.append((gap, found.items.count - 1))
                    }
                }
                continue
            }
            switch box.type {
            case "mdat":
                if box.payloadSize > 0 { add("heif:box:mdat", .content, "media data no item refers to, \(box.payloadSize) bytes", unknown: true) }
            case "mpvd":
                add("heif:motionphoto", .embedded, "motion-photo video (mpvd), \(box.payloadSize) bytes")
            case "sefd":
                add("heif:sefd", .embedded, "Samsung extended data (sefd), \(box.payloadSize) bytes")
            case "jumb":
                let head = try source.read(at: box.payloadOffset, count: Int(min(box.payloadSize, 256)))
                let isC2PA = head.windows(ofCount: 4).contains { $0.elementsEqual(Array("c2pa".utf8)) }
                add(isC2PA ? "jumbf:c2pa" : "jumbf:box", .provenance, isC2PA ? "C2PA manifest (JUMBF)" : "JUMBF box")
                if isC2PA { try found.c2paJUMB(box, store: found.items.count - 1, source: source) }
            case "uuid":
                let uuid = box.extendedType ?? []
                if uuid == BoxUUID.c2pa {
                    add("jumbf:c2pa", .provenance, "C2PA manifest (uuid box)")
                    try found.c2paUUID(box, store: found.items.count - 1, source: source)
                } else if uuid == BoxUUID.xmp {
                    guard box.payloadSize <= Int64(metadataLimit) else {
                        throw MetascrubError.limitExceeded(format: layout.format, path: box.path, offset: box.offset, limit: "\(metadataLimit) bytes per metadata box")
                    }
                    let packet = try reader.payload(of: box)
                    let content = found.lists { items, notes in
                        EmbeddedMetadata.xmpRecord(packet, origin: box.payloadOffset, location: "uuid@\(box.offset) (XMP)", options: options,
                                                   into: &items, notes: &notes)
                    }
                    layout.boxEmbedded[i] = content
                } else {
                    add("heif:uuid", .content, "vendor box \(BoxUUID.hex(uuid))", unknown: true)
                }
            case "free", "skip", "wide":
                if try !isZero(source, box.payloadRange) {
                    add("heif:free", .content, "free space holding \(box.payloadSize) bytes of old data", unknown: true)
                }
            case "moov", "ftyp":
                continue
            default:
                add("heif:box:\(box.type.description.trimmingWhitespace)", .content, "unknown top-level box, \(box.size) bytes", unknown: true)
            }
        }
        if let trailer = layout.trailer {
            layout.trailerItem = try found.trailer("heif:trailer", trailer, in: source, location: "after the last box", after: "the last box")
        }
    }

    /// Whether a range holds only zero bytes (ranges above `paddingCheckLimit` count as data).
    static func isZero(_ source: any ByteSource, _ range: Range<Int64>) throws -> Bool {
        guard range.count <= paddingCheckLimit else { return false }
        var at = range.lowerBound
        while at < range.upperBound {
            let n = Int(min(range.upperBound - at, 1 << 20))
            if try source.read(at: at, count: n).contains(where: { $0 != 0 }) { return false }
            at += Int64(n)
        }
        return true
    }
}
