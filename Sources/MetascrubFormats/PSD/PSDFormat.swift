// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// Photoshop documents (PSD and PSB): the image resources section is rewritten without the removed metadata
/// resources; the header, colour-mode data, layers, masks, layer names and composite image data are copied
/// byte for byte (the sections after the resources hold no absolute offsets, so nothing else changes).
public struct PSDFormat: FormatHandler {
    public init() {}

    public func scan(_ input: any ByteSource, options: ScanOptions) throws -> ScanResult<PSDLayout> {
        try PSDScanner.scan(input, options: options)
    }

    /// Smart objects' files and per-layer metadata stay, each with its reason (`PSDLayout.kept`).
    public func settle(_ findings: [Finding], input: any ByteSource, scan: ScanResult<PSDLayout>, policy: Policy) throws -> [Finding] {
        var settled = findings.keeping(scan.layout.kept)
        for object in scan.layout.smartObjects { object.settle(&settled, policy: policy) }
        return settled
    }

    public func clean(_ input: any ByteSource, scan: ScanResult<PSDLayout>, plan: CleanPlan, to output: any OutputSink) throws -> CleanResult {
        let layout = scan.layout
        var result = CleanResult(method: .remux)
        let body = try PSDWriter.resources(layout, source: input, plan: plan, notes: &result.notes)
        guard body.size <= 0xFFFF_FFFF else {
            throw MetascrubError.limitExceeded(format: layout.structure.format, path: "image resources", offset: layout.structure.resourceSection.lowerBound,
                                               limit: "4 GiB of image resources")
        }
        var out = OutputPlan()
        out.copy(0..<layout.structure.resourceSection.lowerBound, because: .codedData)
        out.append(BigEndian.bytes32(Int(body.size)))
        out.append(contentsOf: body)
        // The layer section as it is, but for the smart objects' JPEG metadata segments that go (zeros, same length).
        // And what the policy removes from a smart object's embedded file: its metadata segments or all its data.
        let zeroed = layout.blanks.filter({ !plan.keeps($0.key) }).map(\.value) + layout.smartObjects.flatMap { $0.zeroed(plan, items: scan.items) }
        var at = layout.structure.layersAndImage.lowerBound
        // Layers and image data are coded data, but for the parts the content check skips: kept smart objects'
        // embedded files and kept blanked segments are structure the scan read.
        let coded = ByteSplice.subtract([layout.structure.layersAndImage], Array(layout.blanks.values) + layout.smartObjects.map(\.data))
        for blank in Self.merged(zeroed) where blank.lowerBound >= at {
            out.copy(at..<blank.lowerBound, coded: coded, otherwise: .structure)
            out.append([UInt8](repeating: 0, count: Int(blank.count)), because: .padding)
            at = blank.upperBound
        }
        out.copy(at..<layout.structure.layersAndImage.upperBound, coded: coded, otherwise: .structure)
        if let trailer = layout.structure.trailer, let item = layout.trailerItem, plan.keeps(item) {
            out.copy(trailer, because: .keptItem(item))
        }
        result.ledger = try out.write(from: input, to: output)
        return result
    }

    /// Ranges sorted and overlapping ones joined.
    static func merged(_ ranges: [Range<Int64>]) -> [Range<Int64>] {
        var result: [Range<Int64>] = []
        for range in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = result.last, range.lowerBound <= last.upperBound {
                result[result.count - 1] = last.lowerBound..<max(last.upperBound, range.upperBound)
            } else {
                result.append(range)
            }
        }
        return result
    }

    public func verifyContent(original: any ByteSource, _ before: PSDLayout, cleaned: any ByteSource, _ after: PSDLayout,
                              result: CleanResult) throws -> ContentCheck {
        let method = "header, colour-mode data, document resources, layers, masks and image data byte-identical"
        let a = before.structure, b = after.structure
        var identical = IdenticalRanges()
        guard a.isLarge == b.isLarge, try ByteComparison.equal(original, 0..<a.colorModeSection.upperBound, cleaned, 0..<b.colorModeSection.upperBound,
                                                               skipping: [], proving: &identical) else {
            return ContentCheck(method: method, passed: false, detail: "the header or colour-mode data differs")
        }
        let holes = Self.merged(Array(before.blanks.values) + before.smartObjects.map(\.data))
        guard try ByteComparison.equal(original, a.layersAndImage, cleaned, b.layersAndImage, skipping: holes, proving: &identical) else {
            return ContentCheck(method: method, passed: false, detail: "the layer and mask section or the image data differs")
        }
        // The document resources the scan kept as structure (one that is not its fields' length is an item).
        func document(_ layout: PSDLayout) -> [PSDStructure.Resource] {
            zip(layout.structure.resources, layout.fates).compactMap { resource, fate in
                if case .document = fate { return resource }
                return nil
            }
        }
        let left = document(before), right = document(after)
        guard left.count == right.count, try zip(left, right).allSatisfy({
            try ByteComparison.equal(original, $0.0.range, cleaned, $0.1.range, skipping: [], proving: &identical)
        }) else {
            return ContentCheck(method: method, passed: false, detail: "a document resource (channels, paths, guides, layer state) differs")
        }
        return ContentCheck(method: method, passed: true, identical: identical)
    }
}

/// The new image resources section's body.
enum PSDWriter {
    static func resources(_ layout: PSDLayout, source: any ByteSource, plan: CleanPlan, notes: inout [Note]) throws -> OutputPlan {
        var out = OutputPlan()
        // Whether the IPTC block goes out unchanged decides whether its digest still holds.
        var iptcUnchanged = false
        var pending: [(PSDStructure.Resource, PSDLayout.Fate)] = []
        for (resource, fate) in zip(layout.structure.resources, layout.fates) {
            if case .iptc(_, let map) = fate { iptcUnchanged = map.keys.allSatisfy(plan.keeps) }
            pending.append((resource, fate))
        }
        for (resource, fate) in pending {
            switch fate {
            case .document:
                out.copy(resource.range, because: .structure)
            case .item(let item):
                if plan.keeps(item) { out.copy(resource.range, because: .keptItem(item)) }
            case .iptcDigest:
                if iptcUnchanged { out.copy(resource.range, because: .structure) }
            case .iptc(let datasets, let map):
                if iptcUnchanged { out.copy(resource.range, because: .structure); continue }
                if let data = IPTC.rebuild(datasets, map: map, keeps: plan.keeps) {
                    out.append(try rebuilt(resource, data, source))
                }
            case .embedded(let metadata):
                switch try metadata.apply(plan: plan, notes: &notes) {
                case .unchanged: out.copy(resource.range, because: .structure)
                case .removed: break
                case .rebuilt(let data): out.append(try rebuilt(resource, data, source))
                }
            }
        }
        return out
    }

    /// The resource's signature, id and name as they were, with new data.
    static func rebuilt(_ resource: PSDStructure.Resource, _ data: [UInt8], _ source: any ByteSource) throws -> [UInt8] {
        let head = try source.read(at: resource.range.lowerBound, count: Int(resource.data.lowerBound - 4 - resource.range.lowerBound))
        return head + BigEndian.bytes32(data.count) + data + (data.count % 2 == 1 ? [0] : [])
    }
}
