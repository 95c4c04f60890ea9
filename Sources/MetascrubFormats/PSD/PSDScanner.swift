// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// What the PSD scanner decided for each image resource, kept for the cleaner.
public struct PSDLayout: Sendable {
    enum Fate {
        /// Part of the document (channels, paths, guides, layer state, resolution): always copied.
        case document
        /// Copied exactly when this item is kept.
        case item(Int)
        /// EXIF (0x0422) or XMP (0x0424), rebuilt with the kept entries.
        case embedded(EmbeddedMetadata)
        /// IPTC-IIM (0x0404), rebuilt with the kept datasets.
        case iptc(datasets: [IPTC.Dataset], map: [Int: [Int]])
        /// The MD5 of the IPTC block (0x0425): copied only while the IPTC block is copied unchanged.
        case iptcDigest
    }

    var structure: PSDStructure
    /// One per resource of `structure`.
    var fates: [Fate]
    var trailerItem: Int?
    /// Items kept whatever the policy says, with the reason (`PSDFormat.settle`): smart objects' files and
    /// per-layer metadata, which the cleaner does not take out of the layer section.
    var kept: [Int: String] = [:]
    /// Metadata segments of smart objects' embedded JPEGs: overwritten with zeros in place when their item goes
    /// (the layer section keeps its length and every offset in it).
    var blanks: [Int: Range<Int64>] = [:]
    /// Smart objects' embedded files looked into by their own handlers.
    var smartObjects: [PSDSmartObject] = []
}

/// Lists the metadata image resources of a Photoshop document: EXIF, XMP, IPTC (itemised), thumbnails,
/// caption, URLs, slices, print settings, version info and anything unknown (one item each), and the ICC
/// profile as `icc:profile`. Resources that describe the document itself (alpha channels, paths, guides,
/// layer state and groups, resolution) are not metadata and are never items.
enum PSDScanner {
    /// Resources a document needs to open as it was saved. None of them names a person, place, device or time.
    /// (Global light angle and altitude, 0x040D and 0x0419, are items: they only steer layer effects Photoshop
    /// re-renders, default to the usual values, and "altitude" reads as a location to every audit tool.)
    static let documentResources: Set<UInt16> = [
        0x03ED, 0x03EE, 0x0400, 0x0402, 0x0406, 0x0408, 0x0414, 0x0415, 0x0416, 0x0417, 0x041D,
        0x0428, 0x0429, 0x042D, 0x0430, 0x0435, 0x0BB7,
    ]
    /// Names the shared Photoshop table does not have.
    static let extraNames: [UInt16: (String, Category)] = [
        0x03E9: ("MacintoshPrintInfo", .software), 0x03EA: ("MacintoshPageFormat", .software),
        0x03F0: ("Caption", .content), 0x03F1: ("BorderInfo", .software), 0x03F2: ("BackgroundColor", .software),
        0x03F5: ("ColorHalftoningInfo", .software), 0x03F6: ("DuotoneHalftoningInfo", .software),
        0x03F7: ("GrayscaleTransferFunctions", .software), 0x03F8: ("ColorTransferFunctions", .software),
        0x03F9: ("DuotoneTransferFunctions", .software), 0x041B: ("WorkflowURL", .content), 0x0423: ("EXIFInfo2", .device),
        0x0BB8: ("OriginPathInfo", .content), 0x1B58: ("ImageReadyVariables", .content), 0x1B59: ("ImageReadyDataSets", .content),
    ]
    static let iccID: UInt16 = 0x040F
    static let exifIDs: Set<UInt16> = [0x0422, 0x0423]
    static let xmpID: UInt16 = 0x0424
    static let parseLimit = 64 << 20

    static func isDocumentResource(_ id: UInt16) -> Bool {
        documentResources.contains(id) || (0x07D0...0x0BB6).contains(id)
    }

    static func scan(_ source: any ByteSource, options: ScanOptions) throws -> ScanResult<PSDLayout> {
        let structure = try PSDStructure.parse(source)
        var items: [MetadataItem] = []
        var notes: [Note] = []
        var fates: [PSDLayout.Fate] = []
        for resource in structure.resources {
            let location = "8BIM/\(String(format4hex: resource.id))"
            func block(_ key: String, _ category: Category, detail: String, unknown: Bool = false) -> PSDLayout.Fate {
                items.append(MetadataItem(key: key, category: category, location: location, offset: resource.range.lowerBound,
                                          length: Int64(resource.range.count), detail: detail, isUnknown: unknown))
                return .item(items.count - 1)
            }
            let size = Int(resource.data.count)
            func data() throws -> [UInt8] {
                try source.read(at: resource.data.lowerBound, count: size, format: structure.format, path: location)
            }
            switch resource.id {
            case let id where isDocumentResource(id):
                if size <= parseLimit, !PSDResourceShape.isExact(id, try data()) {
                    let name = String(format4hex: id)
                    fates.append(block("photoshop:resource:\(name)", .content,
                                       detail: "document resource \(name) not its fields' length, \(size) bytes",
                                       unknown: true))
                } else {
                    fates.append(.document)
                }
            case iccID:
                fates.append(block("icc:profile", .rendering, detail: "ICC profile, \(size) bytes"))
            case PhotoshopIRB.iptcDigestID:
                fates.append(.iptcDigest)
            case PhotoshopIRB.iptcID where size <= parseLimit:
                let bytes = try data()
                if let parsed = try? IPTC.parse(bytes, origin: resource.data.lowerBound, path: "\(location)/IPTC"), parsed.restAt == nil {
                    let map = IPTC.itemise(parsed.datasets, bytes: bytes, location: "\(location)/IPTC", origin: resource.data.lowerBound,
                                           options: options, into: &items, notes: &notes)
                    fates.append(.iptc(datasets: parsed.datasets, map: map))
                } else {
                    fates.append(block("iptc:block", .content, detail: "IPTC-IIM block that does not parse", unknown: true))
                }
            case xmpID where size <= parseLimit:
                fates.append(.embedded(EmbeddedMetadata.xmpRecord(try data(), origin: resource.data.lowerBound, location: "\(location)/XMP",
                                                                  options: options, into: &items, notes: &notes)))
            case let id where exifIDs.contains(id) && size <= parseLimit:
                if let payload = ExifPayload.itemise(try data(), origin: resource.data.lowerBound, location: location, options: options,
                                                     into: &items, notes: &notes) {
                    fates.append(.embedded(.exif(prefix: [], payload: payload)))
                } else {
                    fates.append(.embedded(.opaque(item: items.count - 1)))
                }
            default:
                let (name, category, known) = extraNames[resource.id].map { ($0.0, $0.1, true) } ?? PhotoshopIRB.name(resource.id)
                fates.append(block("photoshop:\(name)", category, detail: "image resource \(String(format4hex: resource.id)), \(size) bytes",
                                   unknown: !known))
            }
        }
        var layout = PSDLayout(structure: structure, fates: fates)
        var found = ItemCollector(options)
        (found.items, found.notes) = (items, notes)
        layers(source, structure, into: &found, layout: &layout)
        (items, notes) = (found.items, found.notes)
        if let trailer = structure.trailer {
            items.append(try Trailer.item(key: "psd:trailer", range: trailer, in: source, location: "after image data",
                                          after: "the composite image data"))
            layout.trailerItem = items.count - 1
        }
        return ScanResult(items: items, notes: notes, layout: layout, embedded: found.embedded)
    }

    static let smartObjectReason = "a smart object's file lives inside the layer section, which is not rewritten; removing it would break the layer that places it, so what the policy removes from the file is overwritten with zeros in place (its metadata segments, or all its data)"
    static let layerMetadataReason = "per-layer metadata lives inside a layer record; metascrub does not rewrite layer records"

    /// Smart objects' linked and embedded files and per-layer metadata, listed as `embedded` findings that are
    /// kept with a reason. A layer section that cannot be walked is reported in a warning.
    static func layers(_ source: any ByteSource, _ structure: PSDStructure, into found: inout ItemCollector, layout: inout PSDLayout) {
        let blocks: [PSDLayerBlocks.Found]
        do {
            blocks = try PSDLayerBlocks.find(source, structure)
        } catch {
            found.notes.append(Note(.warning, code: "layers-unwalked",
                              "the layer and mask section could not be walked for smart objects and per-layer metadata (\(error)); anything there is kept unlisted",
                              offset: structure.layersAndImage.lowerBound))
            return
        }
        for block in blocks {
            let location = "layer and mask/\(block.owner)/\(block.key)"
            if block.key == "shmd" {
                found.items.append(MetadataItem(key: "psd:layerMetadata", category: .embedded, location: location, offset: block.data.lowerBound,
                                          length: Int64(block.data.count), detail: "per-layer metadata (shmd) of \(block.owner), \(block.data.count) bytes"))
                layout.kept[found.items.count - 1] = layerMetadataReason
                continue
            }
            let files = block.files.isEmpty ? [PSDLayerBlocks.LinkedFile(kind: "?", type: "?", range: block.data)] : block.files
            for (k, file) in files.enumerated() {
                let what = file.kind == "liFD" ? "embedded file" : file.kind == "liFE" ? "linked external file" : "linked file"
                found.items.append(MetadataItem(key: "psd:linkedFile", category: .embedded, location: "\(location)/#\(k)", offset: file.range.lowerBound,
                                          length: Int64(file.range.count), detail: "smart object's \(what) (\(file.kind), type \(file.type)), \(file.range.count) bytes"))
                let parent = found.items.count - 1
                layout.kept[parent] = smartObjectReason
                // An embedded JPEG's own metadata (EXIF, XMP, comments) is cleaned in place, as a raw's preview's is.
                var blankable: [Range<Int64>] = []
                for segment in file.jpeg.flatMap({ try? EmbeddedJPEG.metadataSegments(source, $0) }) ?? [] {
                    blankable.append(segment.payload)
                    found.items.append(MetadataItem(key: "psd:linkedFile:\(segment.name)", category: .embedded, location: "\(location)/#\(k)/\(segment.name)",
                                              offset: segment.payload.lowerBound, length: Int64(segment.payload.count),
                                              detail: "\(segment.name) segment of a smart object's embedded JPEG, \(segment.payload.count) bytes", parent: parent))
                    layout.blanks[found.items.count - 1] = segment.payload
                }
                // And the file is looked into by its own handler: what it holds is decided like the rest.
                if let data = file.data,
                   let object = try? PSDSmartObject.itemise(source, data: data, item: parent, segments: blankable, into: &found) {
                    layout.smartObjects.append(object)
                }
            }
        }
    }
}
