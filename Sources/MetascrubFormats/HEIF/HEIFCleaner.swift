// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// Rewrites a HEIF/AVIF file without the removed items: their `iinf`, `iloc`, `iref` and `ipma` entries go,
/// their bytes leave `mdat`/`idat`, properties nothing uses any more go, and every kept item's bytes are copied
/// unchanged (only their offsets in `iloc` change). Exif/XMP items the policy keeps in part are rebuilt in place.
struct HEIFCleaner {
    let source: any ByteSource
    let layout: HEIFLayout
    let plan: CleanPlan
    var result = CleanResult(method: .remux)

    /// Items removed (after following dependencies) and items whose bytes are replaced.
    private var removed = Set<UInt32>()
    private var rebuilt: [UInt32: [UInt8]] = [:]
    private var removedProperties = Set<Int>()

    init(source: any ByteSource, layout: HEIFLayout, plan: CleanPlan) {
        self.source = source
        self.layout = layout
        self.plan = plan
    }

    var format: String { layout.format }
    var meta: HEIFMeta { layout.meta }

    mutating func run(to output: any OutputSink) throws -> CleanResult {
        guard !layout.hasMovie else {
            throw MetascrubError.unsupported(format: format, reason: "image sequences with tracks (moov) are not cleaned yet; nothing was written")
        }
        try decideItems()
        let associations = decideProperties()
        let groups = decideGroups()
        let references = try decideReferences()
        let data = try DataEdits(layout: layout, plan: plan, removed: removed, rebuilt: rebuilt)
        let reader = BoxReader(source, format: format)

        // Top-level pieces in the original order; the meta box is built once the others' sizes are known.
        var pieces: [TopPiece] = []
        for (i, box) in layout.top.enumerated() {
            if i == layout.metaIndex {
                pieces.append(.meta)
            } else if i == 0, let text = layout.ftypText, !plan.keeps(text.item) {
                pieces.append(.bytes(text.plain))
            } else if let splice = data.boxSplices[i] {
                pieces.append(.splice(box, splice))
            } else if let owner = layout.boxOwner[i] {
                if plan.keeps(owner) { pieces.append(.copy(box.range, .keptItem(owner))) }
            } else if let content = layout.boxEmbedded[i] {
                switch try content.apply(plan: plan, notes: &result.notes) {
                case .unchanged: pieces.append(.copy(box.range, .structure))
                case .removed: break
                case .rebuilt(let bytes): pieces.append(.bytes(BoxWriter.box("uuid", bytes, extendedType: box.extendedType)))
                }
            } else if ["free", "skip", "wide"].contains(box.type) {
                continue // zero padding
            } else {
                pieces.append(.copy(box.range, .structure))
            }
        }
        if let trailer = layout.trailer, let owner = layout.trailerItem, plan.keeps(owner) {
            pieces.append(.copy(trailer, .keptItem(owner)))
        }

        // The meta box's size depends on iloc's field sizes, which depend on the offsets it holds: settle it.
        let metaFields = try source.read(at: meta.box.payloadOffset, count: 4, format: format, path: "meta")
        var metaBytes = try reader.bytes(of: meta.box)
        for _ in 0..<4 {
            let starts = payloadStarts(pieces, metaSize: Int64(metaBytes.count))
            let iloc = try locations(data: data, payloadStarts: starts)
            let next = try buildMeta(fields: metaFields, iloc: iloc, associations: associations, groups: groups, references: references,
                                     idat: data.idatSplice, reader: reader)
            if next.count == metaBytes.count {
                metaBytes = next
                break
            }
            metaBytes = next
        }
        let starts = payloadStarts(pieces, metaSize: Int64(metaBytes.count))
        let check = try buildMeta(fields: metaFields, iloc: try locations(data: data, payloadStarts: starts), associations: associations,
                                  groups: groups, references: references, idat: data.idatSplice, reader: reader)
        guard check == metaBytes else {
            throw MetascrubError.verificationFailed(reason: "the rewritten meta box did not settle to one size")
        }

        var out = OutputPlan()
        for piece in pieces {
            switch piece {
            case .meta: out.append(metaBytes)
            case .copy(let range, let reason): out.copy(range, because: reason)
            case .bytes(let bytes): out.append(bytes)
            case .splice(let box, let splice): out.append(box, spliced: splice)
            }
        }
        result.ledger = try out.write(from: source, to: output)
        return result
    }

    // MARK: - Decisions

    private mutating func decideItems() throws {
        var removed = Set<UInt32>()
        for item in meta.items {
            if case .exif(_, let payload)? = layout.embedded[item.id], let orientation = payload.orientationItem,
               (payload.orientation ?? 1) != 1, !plan.keeps(orientation) {
                // HEIF readers turn the image by irot/imir, never by the EXIF tag, so nothing needs baking.
                result.notes.append(Note(.info, code: "heif-exif-orientation",
                                         "the EXIF Orientation tag of a HEIF Exif item does not turn the image (irot/imir do); it was removed and the image displays the same"))
            }
            if let content = layout.embedded[item.id] {
                switch try content.apply(plan: plan, notes: &result.notes) {
                case .unchanged: continue
                case .removed: removed.insert(item.id)
                case .rebuilt(let bytes): rebuilt[item.id] = bytes
                }
            } else if let owner = layout.itemOwner[item.id], !plan.keeps(owner) {
                // `HEIFFormat.settle` keeps the primary image's item, so the plan never removes the picture.
                guard layout.roles[item.id] != .primary else { continue }
                removed.insert(item.id)
            }
        }
        let closed = try HEIFItemGraph.removals(starting: removed, layout)
        for id in closed.subtracting(removed).sorted() {
            guard let owner = layout.itemOwner[id] else { continue }
            result.outcomes[owner] = .removed
            result.notes.append(Note(.info, code: "heif-dependent-removed", "item \(id) was removed because an item it depends on was removed"))
        }
        self.removed = closed
        rebuilt = rebuilt.filter { !closed.contains($0.key) }
    }

    /// `ipma` without removed items and removed properties, renumbered to the kept `ipco` children.
    private mutating func decideProperties() -> [(box: Box, value: ItemPropertyAssociationBox)] {
        removedProperties = Set(layout.propertyOwner.filter { !plan.keeps($0.value) }.keys)
        let droppedGroups = Set(meta.groups.map(\.groupID)).subtracting(decideGroups().map(\.groupID))
        var filtered = meta.associations.map { pair -> (box: Box, value: ItemPropertyAssociationBox) in
            var value = pair.value
            value.entries = value.entries.filter { !removed.contains($0.id) && !droppedGroups.contains($0.id) }.map { entry in
                var e = entry
                e.associations = e.associations.filter { !removedProperties.contains($0.index) && $0.index <= meta.properties.count }
                return e
            }
            return (pair.box, value)
        }
        let used = Set(filtered.flatMap { $0.value.entries.flatMap { $0.associations.map(\.index) } })
        var renumber: [Int: Int] = [0: 0]
        var next = 0
        for index in 1..<(meta.properties.count + 1) where used.contains(index) {
            next += 1
            renumber[index] = next
        }
        for (index, owner) in layout.propertyOwner where plan.keeps(owner) && !used.contains(index) {
            result.outcomes[owner] = .removed
            removedProperties.insert(index)
        }
        for p in filtered.indices {
            for e in filtered[p].value.entries.indices {
                for a in filtered[p].value.entries[e].associations.indices {
                    filtered[p].value.entries[e].associations[a].index = renumber[filtered[p].value.entries[e].associations[a].index] ?? 0
                }
            }
        }
        propertyRenumbering = renumber
        return filtered
    }

    private var propertyRenumbering: [Int: Int] = [:]

    /// Entity groups without removed items; a group that loses members and is left with fewer than two, or
    /// has per-member fields this reader cannot trim, goes.
    private func decideGroups() -> [EntityGroup] {
        meta.groups.compactMap { group in
            var g = group
            g.entities = group.entities.filter { !removed.contains($0) }
            if g.entities.count == group.entities.count { return group }
            return g.entities.count >= 2 && g.rest.isEmpty ? g : nil
        }
    }

    private func decideReferences() throws -> ItemReferenceBox {
        var refs = meta.references
        refs.references = try meta.references.references.compactMap { r in
            guard !removed.contains(r.from) else { return nil }
            var kept = r
            kept.to = r.to.filter { !removed.contains($0) }
            if r.type == ItemReferenceBox.derivedImage, kept.to.count != r.to.count {
                throw MetascrubError.unsupported(format: format, reason: "item \(r.from) would lose some of its derivation inputs; nothing was written")
            }
            return kept.to.isEmpty ? nil : kept
        }
        return refs
    }

    // MARK: - Layout

    enum TopPiece {
        case meta
        case copy(Range<Int64>, LedgerReason)
        case bytes([UInt8])
        case splice(Box, ByteSplice)
    }

    /// New file offset of each spliced box's payload, keyed by its original offset.
    private func payloadStarts(_ pieces: [TopPiece], metaSize: Int64) -> [Int64: Int64] {
        var at: Int64 = 0
        var starts: [Int64: Int64] = [:]
        for piece in pieces {
            switch piece {
            case .meta: at += metaSize
            case .copy(let range, _): at += Int64(range.count)
            case .bytes(let bytes): at += Int64(bytes.count)
            case .splice(let box, let splice):
                let header = box.headerSize(spliced: splice)
                starts[box.offset] = at + header
                at += header + splice.newCount
            }
        }
        return starts
    }

    /// `iloc` with the kept items at their new offsets.
    private func locations(data: DataEdits, payloadStarts: [Int64: Int64]) throws -> ItemLocationBox? {
        guard var iloc = meta.locations else { return nil }
        iloc.entries = try iloc.entries.filter { !removed.contains($0.itemID) }.map { (entry: ItemLocationBox.Entry) throws -> ItemLocationBox.Entry in
            guard let itemData = layout.data[entry.itemID] else { return entry }
            var ranges = itemData.ranges
            var indices = entry.extents.map(\.index)
            if let replacement = data.replacements[entry.itemID] {
                ranges = [replacement]
                indices = [indices.first ?? 0]
            }
            var placed: [Range<Int64>] = []
            for range in ranges {
                guard let mapped = newRange(of: range, method: itemData.constructionMethod, data: data, payloadStarts: payloadStarts),
                      mapped.lowerBound >= 0 else {
                    throw MetascrubError.unsupported(format: format, reason: "item \(entry.itemID) has bytes outside the media data this remuxer rewrites; nothing was written")
                }
                placed.append(mapped)
            }
            var e = entry
            let base: Int64 = iloc.baseOffsetSize > 0 ? (placed.map { $0.lowerBound }.min() ?? 0) : 0
            e.baseOffset = UInt64(base)
            var extents: [ItemLocationBox.Extent] = []
            for (index, place) in zip(indices, placed) {
                extents.append(ItemLocationBox.Extent(index: index, offset: UInt64(place.lowerBound - base), length: UInt64(place.count)))
            }
            e.extents = extents
            return e
        }
        return iloc.fitted()
    }

    /// Where an item's byte range lands: a file range for construction method 0, an `idat`-relative range for 1.
    private func newRange(of range: Range<Int64>, method: UInt8, data: DataEdits, payloadStarts: [Int64: Int64]) -> Range<Int64>? {
        if method == 1 {
            return data.idatSplice?.map(range)
        }
        // Coded data of a cut file that runs past its end (damaged input): the part that is there is placed like
        // any other, the missing part follows it, so the item keeps its declared length.
        if range.upperBound > source.size, let last = data.splice(endingAt: source.size), range.lowerBound >= last.box.payloadOffset {
            let anchor = min(range.lowerBound, source.size)
            guard let payload = payloadStarts[last.box.offset], let present = last.splice.map(anchor..<source.size) else { return nil }
            let start = payload + present.lowerBound + (range.lowerBound - anchor)
            return start..<start + Int64(range.count)
        }
        guard let holder = data.splice(holding: range), let payload = payloadStarts[holder.box.offset],
              let relative = holder.splice.map(range) else { return nil }
        let start: Int64 = payload + relative.lowerBound
        let end: Int64 = payload + relative.upperBound
        return start..<end
    }

    private func buildMeta(
        fields: [UInt8], iloc: ItemLocationBox?, associations: [(box: Box, value: ItemPropertyAssociationBox)], groups: [EntityGroup],
        references: ItemReferenceBox, idat: ByteSplice?, reader: BoxReader
    ) throws -> [UInt8] {
        var children: [[UInt8]] = []
        for (i, child) in meta.children.enumerated() {
            switch child.type {
            case "iinf":
                let kept = meta.items.filter { !removed.contains($0.id) }
                let plain = { (id: UInt32) in layout.nameOwner[id].map { !plan.keeps($0) } ?? false }
                children.append(try meta.info.serialize(keeping: kept, reader: reader, plain: plain))
            case "dinf":
                if let text = layout.dinfText, !plan.keeps(text.item) {
                    children.append(text.plain)
                } else {
                    children.append(try reader.bytes(of: child))
                }
            case "hdlr":
                if let text = layout.hdlrText, !plan.keeps(text.item) {
                    children.append(text.plain)
                } else {
                    children.append(try reader.bytes(of: child))
                }
            case "iloc":
                if let iloc { children.append(iloc.serialize()) }
            case "iref":
                if let bytes = references.serialize() { children.append(bytes) }
            case "iprp":
                children.append(try buildItemProperties(child, associations: associations, reader: reader))
            case "idat":
                children.append(BoxWriter.box("idat", try idat?.plan.materialise(from: source) ?? []))
            case "grpl":
                if !groups.isEmpty { children.append(BoxWriter.container("grpl", children: groups.map { $0.serialize() })) }
            default:
                if let owner = layout.metaChildOwner[i] {
                    if plan.keeps(owner) { children.append(try reader.bytes(of: child)) }
                } else if child.type != "free", child.type != "skip" {
                    children.append(try reader.bytes(of: child))
                }
            }
        }
        return BoxWriter.container("meta", fields: fields, children: children)
    }

    private func buildItemProperties(_ iprp: Box, associations: [(box: Box, value: ItemPropertyAssociationBox)], reader: BoxReader) throws -> [UInt8] {
        var children: [[UInt8]] = []
        for part in try reader.children(of: iprp, depth: 2).boxes {
            if part.type == "ipco" {
                var kept: [[UInt8]] = []
                for (i, property) in meta.properties.enumerated() where (propertyRenumbering[i + 1] ?? 0) > 0 {
                    kept.append(try reader.bytes(of: property))
                }
                children.append(BoxWriter.container("ipco", children: kept))
            } else if part.type == "ipma" {
                if let rebuilt = associations.first(where: { $0.box.offset == part.offset }) { children.append(rebuilt.value.serialize()) }
            } else {
                children.append(try reader.bytes(of: part))
            }
        }
        return BoxWriter.container("iprp", children: children)
    }
}

/// The byte-level edits: which ranges of `mdat` (and `idat`) are cut, which are replaced by rebuilt records.
struct DataEdits {
    /// Splices of the top-level boxes holding item data, by top-level index.
    var boxSplices: [Int: ByteSplice] = [:]
    var idatSplice: ByteSplice?
    /// The range each rebuilt item's new bytes replace.
    var replacements: [UInt32: Range<Int64>] = [:]
    private var boxes: [(box: Box, splice: ByteSplice)] = []

    init(layout: HEIFLayout, plan: CleanPlan, removed: Set<UInt32>, rebuilt: [UInt32: [UInt8]]) throws {
        var kept: [Range<Int64>] = []
        var coded: [Range<Int64>] = []
        var cut: [Range<Int64>] = []
        var newBytes: [(range: Range<Int64>, bytes: [UInt8])] = []
        for (id, data) in layout.data.sorted(by: { $0.key < $1.key }) {
            if removed.contains(id) {
                cut += data.ranges
            } else if let bytes = rebuilt[id] {
                guard let first = data.ranges.first(where: { !$0.isEmpty }) else {
                    throw MetascrubError.unsupported(format: layout.format, reason: "item \(id) cannot be rebuilt in place; nothing was written")
                }
                newBytes.append((first, bytes))
                replacements[id] = first
                cut += data.ranges
            } else {
                kept += data.ranges
                // The content check compares kept image items and derivation inputs byte for byte: coded data.
                if layout.meta.item(id)?.isImage == true || layout.roles[id] == .input { coded += data.ranges }
            }
        }
        coded = ByteSplice.union(coded)
        for (gap, item) in layout.unreferenced where item.map({ !plan.keeps($0) }) ?? true { cut.append(gap) }
        let keptUnion = ByteSplice.union(kept)
        for r in newBytes where !ByteSplice.subtract([r.range], keptUnion).elementsEqual([r.range]) {
            throw MetascrubError.unsupported(format: layout.format, reason: "a metadata item shares its bytes with a kept item; nothing was written")
        }
        let cuts = ByteSplice.subtract(cut, keptUnion)
        do {
            for i in layout.dataBoxes.sorted() {
                let box = layout.top[i]
                let inside = newBytes.filter { box.payloadRange.contains($0.range.lowerBound) }
                let splice = try ByteSplice(range: box.payloadRange, cuts: cuts, replacements: inside, coded: coded)
                boxSplices[i] = splice
                boxes.append((box, splice))
            }
            if let idat = layout.meta.idat {
                let inside = newBytes.filter { idat.payloadRange.contains($0.range.lowerBound) }
                // Bytes of idat no kept item uses are dropped as well.
                let idatCuts = ByteSplice.subtract([idat.payloadRange], keptUnion + inside.map(\.range))
                idatSplice = try ByteSplice(range: idat.payloadRange, cuts: idatCuts, replacements: inside, coded: coded)
            }
        } catch let problem as ByteSplice.Problem {
            throw MetascrubError.unsupported(format: layout.format, reason: "rebuilt metadata items overlap (\(problem)); nothing was written")
        }
    }

    /// The data box that ends where the file ends (a cut file's last `mdat`).
    func splice(endingAt fileEnd: Int64) -> (box: Box, splice: ByteSplice)? {
        boxes.last.flatMap { $0.box.end == fileEnd ? $0 : nil }
    }

    func splice(holding range: Range<Int64>) -> (box: Box, splice: ByteSplice)? {
        for entry in boxes {
            let payload = entry.box.payloadRange
            if payload.contains(range.lowerBound) || (range.isEmpty && payload.upperBound == range.lowerBound) { return entry }
        }
        return nil
    }
}
