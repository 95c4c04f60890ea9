// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// The parsed `meta` box of a HEIF/AVIF file: items, their locations, references, properties and groups,
/// with the boxes they came from so a rewrite can copy what it does not change.
struct HEIFMeta {
    var box: Box
    var children: [Box]
    var primaryID: UInt32
    var info: ItemInfoBox
    var locations: ItemLocationBox?
    var references: ItemReferenceBox
    var iprp: Box?
    var ipco: Box?
    /// The `ipco` children; property index n (1-based) is `properties[n - 1]`.
    var properties: [Box]
    var associations: [(box: Box, value: ItemPropertyAssociationBox)]
    var idat: Box?
    var grpl: Box?
    var groups: [EntityGroup]
    /// Data reference entries (1-based) that point at this same file.
    var selfContainedReferences: Set<Int>
    /// Lookups built once: item by ID, references both ways, property associations by item.
    let itemsByID: [UInt32: HEIFItem]
    let links: ReferenceIndex
    private let associationsByID: [UInt32: [ItemPropertyAssociationBox.Association]]

    /// Most items a file may describe (a 100-megapixel grid has a few hundred).
    static let maxItems = 1 << 16

    var items: [HEIFItem] { info.items }

    func item(_ id: UInt32) -> HEIFItem? { itemsByID[id] }

    /// Property associations of an item or group, over all `ipma` boxes, in order.
    func associations(of id: UInt32) -> [ItemPropertyAssociationBox.Association] {
        associationsByID[id] ?? []
    }

    init(
        box: Box, children: [Box], primaryID: UInt32, info: ItemInfoBox, locations: ItemLocationBox?, references: ItemReferenceBox,
        iprp: Box?, ipco: Box?, properties: [Box], associations: [(box: Box, value: ItemPropertyAssociationBox)], idat: Box?,
        grpl: Box?, groups: [EntityGroup], selfContainedReferences: Set<Int>
    ) {
        self.box = box
        self.children = children
        self.primaryID = primaryID
        self.info = info
        self.locations = locations
        self.references = references
        self.iprp = iprp
        self.ipco = ipco
        self.properties = properties
        self.associations = associations
        self.idat = idat
        self.grpl = grpl
        self.groups = groups
        self.selfContainedReferences = selfContainedReferences
        itemsByID = Dictionary(info.items.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        links = ReferenceIndex(references)
        var byID: [UInt32: [ItemPropertyAssociationBox.Association]] = [:]
        for (_, value) in associations {
            for entry in value.entries { byID[entry.id, default: []] += entry.associations }
        }
        associationsByID = byID
    }

    /// The property boxes associated with `id` (index 0 and out-of-range indices skipped).
    func propertyBoxes(of id: UInt32) -> [(index: Int, box: Box, essential: Bool)] {
        associations(of: id).compactMap { a in
            a.index >= 1 && a.index <= properties.count ? (a.index, properties[a.index - 1], a.essential) : nil
        }
    }

    static func parse(_ box: Box, reader: BoxReader) throws -> HEIFMeta {
        let format = reader.format
        func malformed(_ b: Box, _ reason: String) -> MetascrubError {
            .malformed(format: format, path: b.path, offset: b.offset, reason: reason)
        }
        let children = try reader.children(of: box, skip: 4, depth: 1).boxes
        func single(_ type: FourCC) throws -> Box? {
            let found = children.filter { $0.type == type }
            guard found.count <= 1 else { throw malformed(found[1], "more than one \(type) box") }
            return found.first
        }
        guard let pitm = try single("pitm") else { throw malformed(box, "no primary item (pitm)") }
        var c = ByteCursor(try reader.payload(of: pitm), origin: pitm.payloadOffset, format: format, path: pitm.path)
        let (pitmVersion, _) = try c.fullBoxHeader()
        let primary = pitmVersion == 0 ? UInt32(try c.u16("item_ID")) : try c.u32("item_ID")

        let info = try single("iinf").map { try ItemInfoBox.parse($0, reader: reader) } ?? ItemInfoBox(version: 0, items: [])
        guard info.items.count <= maxItems else {
            throw MetascrubError.limitExceeded(format: format, path: "meta/iinf", offset: box.offset, limit: "\(maxItems) items")
        }
        let locations = try single("iloc").map { try ItemLocationBox.parse(try reader.payload(of: $0), box: $0, format: format) }
        let references = try single("iref").map { try ItemReferenceBox.parse($0, reader: reader) } ?? ItemReferenceBox(version: 0, references: [])

        var ipco: Box?
        var properties: [Box] = []
        var associations: [(Box, ItemPropertyAssociationBox)] = []
        let iprp = try single("iprp")
        if let iprp {
            let parts = try reader.children(of: iprp, depth: 2).boxes
            let ipcos = parts.filter { $0.type == "ipco" }
            guard ipcos.count <= 1 else { throw malformed(ipcos[1], "more than one ipco box") }
            ipco = ipcos.first
            if let ipco { properties = try reader.children(of: ipco, depth: 3).boxes }
            for ipma in parts where ipma.type == "ipma" {
                associations.append((ipma, try ItemPropertyAssociationBox.parse(try reader.payload(of: ipma), box: ipma, format: format)))
            }
        }
        let grpl = try single("grpl")
        let groups = try grpl.map { try reader.children(of: $0, depth: 2).boxes.map { try EntityGroup.parse($0, reader: reader) } } ?? []
        return HEIFMeta(
            box: box, children: children, primaryID: primary, info: info, locations: locations, references: references,
            iprp: iprp, ipco: ipco, properties: properties, associations: associations, idat: try single("idat"), grpl: grpl,
            groups: groups, selfContainedReferences: try selfContained(try single("dinf"), reader: reader))
    }

    /// Entries of `dinf/dref` flagged self-contained (data in this file).
    static func selfContained(_ dinf: Box?, reader: BoxReader) throws -> Set<Int> {
        guard let dinf, let dref = try reader.children(of: dinf, depth: 2).boxes.first(where: { $0.type == "dref" }) else { return [] }
        var out = Set<Int>()
        for (i, entry) in try reader.children(of: dref, skip: 8, depth: 3).boxes.enumerated() {
            if let (_, flags) = try? reader.fullBoxHeader(of: entry), flags & 1 != 0 { out.insert(i + 1) }
        }
        return out
    }
}

/// Where an item's bytes are in the file.
struct ItemData: Sendable, Equatable {
    /// 0: in the file (usually `mdat`); 1: inside `idat`.
    var constructionMethod: UInt8
    /// Absolute file ranges, in extent order.
    var ranges: [Range<Int64>]

    var length: Int64 { ranges.reduce(0) { $0 + Int64($1.count) } }

    /// nil for data this file does not hold (another file, or built from another item's extents).
    /// `tolerateCut`: the file was cut inside its last `mdat` (damaged input the policy cleans); extents running
    /// past the end are kept as declared, for the scanner to judge.
    static func resolve(_ entry: ItemLocationBox.Entry, meta: HEIFMeta, fileSize: Int64, format: String,
                        tolerateCut: Bool = false) throws -> ItemData? {
        let path = "meta/iloc/item \(entry.itemID)"
        guard entry.constructionMethod != 2 else { return nil }
        if entry.dataReferenceIndex != 0, !meta.selfContainedReferences.contains(Int(entry.dataReferenceIndex)) { return nil }
        let container: Range<Int64>
        if entry.constructionMethod == 1 {
            guard let idat = meta.idat else {
                throw MetascrubError.malformed(format: format, path: path, offset: meta.box.offset, reason: "item data in idat, but there is no idat box")
            }
            container = idat.payloadRange
        } else {
            container = 0..<fileSize
        }
        var ranges: [Range<Int64>] = []
        for extent in entry.extents {
            let (sum, overflow) = entry.baseOffset.addingReportingOverflow(extent.offset)
            guard !overflow, sum <= UInt64(Int64.max / 4), extent.length <= UInt64(Int64.max / 4) else {
                throw MetascrubError.malformed(format: format, path: path, offset: meta.box.offset, reason: "extent offset out of range")
            }
            let start = container.lowerBound + Int64(sum)
            // Length 0 means "to the end of the container".
            let end = extent.length == 0 ? container.upperBound : start + Int64(extent.length)
            guard start <= end, end <= container.upperBound || (tolerateCut && entry.constructionMethod == 0) else {
                if entry.constructionMethod == 0 {
                    throw MetascrubError.truncated(format: format, path: path, offset: start, needed: end - container.upperBound)
                }
                throw MetascrubError.malformed(format: format, path: path, offset: start, reason: "extent runs past the end of idat")
            }
            ranges.append(start..<end)
        }
        return ItemData(constructionMethod: entry.constructionMethod, ranges: ranges)
    }
}
