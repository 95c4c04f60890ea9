// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubNative

/// JPEG (JFIF/EXIF): segment-level remux. The entropy-coded data is copied byte for byte; orientation is
/// baked by a DCT-domain transform (libturbojpeg, perfect transforms only) when the policy asks for it.
public struct JPEGFormat: FormatHandler {
    public init() {}

    /// Whole-file reads (only for lossless transforms) are refused above this size.
    static let transformLimit: Int64 = 512 << 20
    /// Decoder rounding of rotated blocks measured at up to 3 levels; 8 leaves room without hiding real damage.
    static let rotateTolerance = 8

    public func scan(_ input: any ByteSource, options: ScanOptions) throws -> ScanResult<JPEGLayout> {
        try JPEGScanner.scan(input, options: options)
    }

    /// The cleaned file's scan, its entropy-coded data found as a copy of the original's where it is one
    /// (`EntropyHint`): the same result as `scan`, without walking the copy again.
    public func rescan(_ cleaned: any ByteSource, original: any ByteSource, before: ScanResult<JPEGLayout>) throws -> ScanResult<JPEGLayout> {
        try JPEGScanner.scan(cleaned, options: ScanOptions(), hint: EntropyHint(original: original, before.layout.structure))
    }

    public func clean(_ input: any ByteSource, scan: ScanResult<JPEGLayout>, plan: CleanPlan, to output: any OutputSink) throws -> CleanResult {
        let layout = scan.layout
        var result = CleanResult(method: .remux)
        var keepOrientation: Bool?
        var transformed: (bytes: [UInt8], structure: JPEGStructure)?

        // `settle` has already turned a bake that cannot be done exactly into `keep`; what is left is done here.
        if let item = layout.orientationItem, plan.disposition(item) == .bake {
            let orientation = layout.orientation ?? 1
            if let transform = Self.transform(forOrientation: orientation) {
                let bytes = try Self.transformed(input, transform)
                transformed = (bytes, try JPEGStructure.parse(MemoryByteSource(bytes)))
                keepOrientation = false
                result.method = .losslessTransform
                result.outcomes[item] = .baked
                result.notes.append(Note(.info, code: "orientation-baked",
                                         "orientation \(orientation) baked into the image by a lossless DCT-domain transform"))
                if plan.policy.allowReencode && plan.policy.orientation != .rotate {
                    // The ladder's second rung may have chosen this turn with rounding differences (`JPEGBake`):
                    // verification measures the decoded output against min-psnr rather than expecting identity.
                    result.minimumPSNR = plan.policy.minimumPSNR
                } else if plan.policy.orientation == .rotate {
                    result.sampleTolerance = Self.rotateTolerance
                    result.notes.append(Note(.info, code: "orientation-rotated",
                                             "baked under `orientation: rotate`: decoders may round the turned blocks by a few levels"))
                }
            } else {
                result.outcomes[item] = .removed
            }
        }

        // The MPF segment holds offsets into the output that are known only once the image is laid out, so the
        // plan is built around it: what comes before it, its bytes, what comes after.
        var out = OutputPlan(), afterMPF = OutputPlan()
        out.append([0xFF, 0xD8])
        var mpf: [UInt8]?
        let structure = layout.structure
        var insertedTransformed = false
        for (index, segment) in structure.segments.enumerated() {
            if segment.role == .structural || segment.role == .scan {
                if let transformed {
                    if !insertedTransformed {
                        insertedTransformed = true
                        for s in transformed.structure.segments where s.role == .structural || s.role == .scan {
                            let bytes = Array(transformed.bytes[Int(s.offset)..<Int(s.streamEnd)])
                            if mpf == nil { out.append(bytes) } else { afterMPF.append(bytes) }
                        }
                    }
                } else if mpf == nil {
                    out.copy(segment.offset..<segment.streamEnd, because: .codedData)
                } else {
                    afterMPF.copy(segment.offset..<segment.streamEnd, because: .codedData)
                }
                continue
            }
            guard let piece = try segmentPiece(index, segment, layout, plan, keepOrientation: keepOrientation, input, &result) else { continue }
            if segment.role == .mpf, case .bytes(let bytes, _) = piece {
                mpf = bytes
            } else if mpf == nil {
                out.append(piece)
            } else {
                afterMPF.append(piece)
            }
        }
        afterMPF.append([0xFF, 0xD9])
        let trailer = Self.keptTrailer(layout, plan, cleaned: try scan.cleanedEmbeddedFiles(plan))
        if let segmentBytes = mpf {
            let headerAt = out.size + 8
            let imageEnd = out.size + Int64(segmentBytes.count) + afterMPF.size
            var keptTrailer: [(old: Range<Int64>, new: Int64)] = []
            var at = imageEnd
            for part in trailer {
                keptTrailer.append((part.old, at))
                at += part.size
            }
            out.append(MPFPatch.relocate(segmentBytes, oldHeaderAt: structure.segments.first { $0.role == .mpf }!.payloadOffset + 4,
                                         newHeaderAt: headerAt, primarySize: imageEnd, moves: keptTrailer))
            if transformed != nil {
                result.notes.append(Note(.warning, code: "mpf-not-rotated", "secondary MPF images were kept but not rotated with the primary image"))
            }
        }
        out.append(contentsOf: afterMPF)
        for part in trailer { out.append(part.piece) }
        result.ledger = try out.write(from: input, to: output)
        return result
    }

    /// The parts after EOI the plan keeps, in file order: copied, or (an image appended after this one, kept
    /// cleaned) its cleaned bytes.
    static func keptTrailer(_ layout: JPEGLayout, _ plan: CleanPlan, cleaned: [Int: [UInt8]]) -> [(old: Range<Int64>, piece: OutputPlan.Piece, size: Int64)] {
        layout.trailerParts.sorted(by: { $0.range.lowerBound < $1.range.lowerBound }).compactMap { part in
            if let bytes = cleaned[part.item] { return (part.range, .bytes(bytes, reason: .structure), Int64(bytes.count)) }
            guard plan.keeps(part.item) else { return nil }
            let piece = OutputPlan.Piece.copy(offset: part.range.lowerBound, count: Int64(part.range.count), reason: .keptItem(part.item))
            return (part.range, piece, Int64(part.range.count))
        }
    }

    /// The bytes that replace one metadata segment, or nil to drop it.
    private func segmentPiece(
        _ index: Int, _ segment: JPEGStructure.Segment, _ layout: JPEGLayout, _ plan: CleanPlan, keepOrientation: Bool?,
        _ input: any ByteSource, _ result: inout CleanResult
    ) throws -> OutputPlan.Piece? {
        // A segment copied whole holds only items the policy keeps, each read by the scan (or none at all).
        let copy = OutputPlan.Piece.copy(offset: segment.offset, count: Int64(segment.length), reason: .structure)
        let items = layout.segmentItems[index] ?? []
        switch layout.contents[index] {
        case .exif(let block, let map)?:
            let owned = map.owned
            if map.entries.allSatisfy(plan.keeps), keepOrientation == nil || block.orientationValue == nil {
                if owned.isEmpty { return nil }
                return try map.unchanged(keeps: plan.keeps).map { try Self.segment(0xE1, JPEGStructure.exifHeader + $0) }
                    ?? copy
            }
            let kept = map.keptDirectories(of: block, keeps: plan.keeps, keepOrientation: keepOrientation)
            guard let built = ExifWriter(order: block.order, directories: kept.directories, thumbnail: kept.thumbnail).build() else { return nil }
            if !built.makerNoteInPlace {
                result.notes.append(Note(.warning, code: "makernote-moved", "the kept maker note had to move; its internal offsets may no longer resolve"))
            }
            return try Self.segment(0xE1, JPEGStructure.exifHeader + built.bytes)
        case .xmp(let packet, let keys)?:
            guard let rebuilt = try XMPItems.rebuild(packet: packet, keys: keys, keeps: plan.keeps) else { return nil }
            return rebuilt == packet ? copy : try Self.segment(0xE1, JPEGStructure.xmpHeader + rebuilt)
        case .photoshop(let irb, let iptc, let resourceItems)?:
            if items.allSatisfy(plan.keeps) { return items.isEmpty ? nil : copy }
            var kept: [UInt8] = []
            var iptcChanged = false
            let keptResources = Set(resourceItems.filter { plan.keeps($0.key) }.map(\.value))
            for (r, resource) in irb.resources.enumerated() {
                if resource.id == PhotoshopIRB.iptcID, let iptc {
                    let allKept = iptc.map.keys.allSatisfy(plan.keeps)
                    if allKept { kept += resource.raw; continue }
                    iptcChanged = true
                    if let data = IPTC.rebuild(iptc.datasets, map: iptc.map, keeps: plan.keeps) {
                        kept += PhotoshopIRB.resource(id: resource.id, data: data)
                    }
                } else if resource.id == PhotoshopIRB.iptcDigestID {
                    continue
                } else if keptResources.contains(r) {
                    kept += resource.raw
                }
            }
            // The IPTC digest is an MD5 of the IPTC block: keep it only when that block is untouched.
            if !iptcChanged, let digest = irb.resources.first(where: { $0.id == PhotoshopIRB.iptcDigestID }), iptc != nil {
                kept += digest.raw
            }
            return kept.isEmpty ? nil : try Self.segment(0xED, JPEGStructure.photoshopHeader + kept)
        case .jfif(let thumbnailItem, let slackItem)?:
            let dropThumbnail = thumbnailItem.map { !plan.keeps($0) } ?? false
            let dropSlack = slackItem.map { !plan.keeps($0) } ?? false
            guard dropThumbnail || dropSlack else { return copy }
            let payload = try input.read(at: segment.payloadOffset, count: segment.payloadLength)
            guard payload.count >= JPEGStructure.jfifFields else { return copy }
            let fieldsEnd = min(payload.count, JPEGStructure.jfifFields + 3 * Int(payload[12]) * Int(payload[13]))
            var fields = Array(payload[..<JPEGStructure.jfifFields])
            // The thumbnail's pixels go with its size; the slack after the fields is its own item.
            if dropThumbnail { fields[12] = 0; fields[13] = 0 }
            let thumbnail = dropThumbnail ? [] : Array(payload[JPEGStructure.jfifFields..<fieldsEnd])
            let slack = dropSlack ? [] : Array(payload[fieldsEnd...])
            return try Self.segment(0xE0, fields + thumbnail + slack)
        case .adobe?:
            if items.allSatisfy(plan.keeps) { return copy }
            guard let adobe = items.first, plan.keeps(adobe) else { return nil }
            // Kept for its colour transform: written length-exact, without what followed its fields.
            return try Self.segment(0xEE, input.read(at: segment.payloadOffset, count: JPEGStructure.adobeFields))
        case .none?, nil:
            if items.isEmpty { return copy }
            if segment.role == .icc, items.allSatisfy(plan.keeps),
               let blanked = try Self.iccSegment(index, segment, layout, plan, input, &result) { return blanked }
            return items.allSatisfy(plan.keeps) ? copy : nil
        }
    }

    static func segment(_ marker: UInt8, _ payload: [UInt8]) throws -> OutputPlan.Piece {
        guard payload.count + 2 <= 0xFFFF else {
            throw MetascrubError.limitExceeded(format: "JPEG", path: "rebuilt APP\(marker - 0xE0)", offset: 0, limit: "65533 bytes per segment")
        }
        return .bytes([0xFF, marker] + BigEndian.bytes16(payload.count + 2) + payload, reason: .structure)
    }

    /// The whole image turned in the DCT domain (a perfect transform: `settle` checked the MCU alignment).
    static func transformed(_ input: any ByteSource, _ transform: LosslessJPEG.Transform) throws -> [UInt8] {
        guard input.size <= transformLimit else {
            throw MetascrubError.limitExceeded(format: "JPEG", path: "orientation transform", offset: 0, limit: "\(transformLimit) bytes")
        }
        return try LosslessJPEG.transform(try input.readAll(), transform)
    }

    /// An orientation the policy bakes stays as a tag when no exact lossless transform exists (`JPEGBake`).
    public func settle(_ findings: [Finding], input: any ByteSource, scan: ScanResult<JPEGLayout>, policy: Policy) throws -> [Finding] {
        let layout = scan.layout
        // With re-encoding allowed the bake stays (the cleaner re-encodes what no lossless transform can do), so
        // the decision is left to `reencodableBake` rather than made twice.
        guard !policy.allowReencode, let item = layout.orientationItem,
              findings.indices.contains(item), findings[item].disposition == .bake else { return findings }
        var settled = findings
        if case .keep(let reason) = JPEGBake.decide(input, layout, policy: policy) {
            settled.keep(item, because: reason)
        }
        return settled
    }

    /// An orientation to bake that no exact lossless transform can do (`reencode: true`): the re-encoder turns it.
    public func reencodableBake(input: any ByteSource, scan: ScanResult<JPEGLayout>, plan: CleanPlan) -> ReencodableBake? {
        let layout = scan.layout
        guard let item = layout.orientationItem, let orientation = layout.orientation,
              plan.findings.indices.contains(item), plan.disposition(item) == .bake,
              // The alternative is a re-encode, which decodes the whole image anyway: the proof may go up to the budget.
              case .keep(let reason) = JPEGBake.decide(input, layout, policy: plan.policy, proofPixels: plan.policy.maxPixels) else { return nil }
        return ReencodableBake(coding: .jpeg, orientation: orientation, item: item, reason: reason)
    }

    static func transform(forOrientation o: Int) -> LosslessJPEG.Transform? {
        switch o {
        case 2: .flipHorizontal
        case 3: .rotate180
        case 4: .flipVertical
        case 5: .transpose
        case 6: .rotate90
        case 7: .transverse
        case 8: .rotate270
        default: nil
        }
    }

    public func verifyContent(original: any ByteSource, _ before: JPEGLayout, cleaned: any ByteSource, _ after: JPEGLayout, result: CleanResult) throws -> ContentCheck {
        if result.method == .losslessTransform {
            if let threshold = result.minimumPSNR {
                return try JPEGVerifier.turn(original: original, orientation: before.orientation ?? 1, cleaned: cleaned, after.structure,
                                             minimumPSNR: threshold)
            }
            if result.sampleTolerance > 0 {
                return try JPEGVerifier.displayedPixels(original: original, orientation: before.orientation ?? 1, cleaned: cleaned,
                                                        tolerance: result.sampleTolerance)
            }
            // The bake decision already decoded both images and found them identical (JPEGBake); what is left
            // to prove is that the written image is that transform, byte for byte, made again here.
            guard let transform = Self.transform(forOrientation: before.orientation ?? 1) else {
                return ContentCheck(method: "none", passed: false, detail: "a transform without an orientation")
            }
            let expected = try Self.transformed(original, transform)
            return try JPEGVerifier.imageStream(original: MemoryByteSource(expected), try JPEGStructure.parse(MemoryByteSource(expected)),
                                                cleaned: cleaned, after.structure)
        }
        return try JPEGVerifier.imageStream(original: original, before.structure, cleaned: cleaned, after.structure)
    }
}

extension PhotoshopIRB {
    static func resource(id: UInt16, data: [UInt8]) -> [UInt8] {
        var out = Array("8BIM".utf8) + BigEndian.bytes16(Int(id)) + [0, 0] + BigEndian.bytes32(data.count) + data
        if data.count % 2 == 1 { out.append(0) }
        return out
    }
}
