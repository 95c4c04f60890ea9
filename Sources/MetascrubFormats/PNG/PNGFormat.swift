// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubNative

/// PNG and APNG: chunk-level remux. Image chunks (IHDR, PLTE, IDAT, fcTL/fdAT, colour chunks) are copied byte
/// for byte; an EXIF orientation is baked by re-encoding the oriented samples losslessly when the policy asks.
public struct PNGFormat: FormatHandler {
    public init() {}

    /// Decoded-pixel comparison is skipped above this (the chunk bytes are still compared).
    static let decodeLimit = 1 << 24

    public func scan(_ input: any ByteSource, options: ScanOptions) throws -> ScanResult<PNGLayout> {
        try PNGScanner.scan(input, options: options)
    }

    public func clean(_ input: any ByteSource, scan: ScanResult<PNGLayout>, plan: CleanPlan, to output: any OutputSink) throws -> CleanResult {
        let layout = scan.layout
        var result = CleanResult(method: .remux)
        let structure = layout.structure
        var keepOrientation: Bool?
        var baked: PNGOrientation.Baked?

        // `settle` has turned a bake this PNG cannot take into `keep`; a refusal here is a programming error.
        if let exif = layout.exif, let item = exif.orientationItem, plan.disposition(item) == .bake,
           let orientation = exif.orientation, (2...8).contains(orientation) {
            baked = try PNGOrientation.bake(input, structure, orientation: orientation)
            keepOrientation = false
            result.method = .losslessTransform
            result.outcomes[item] = .baked
            result.notes.append(Note(.info, code: "orientation-baked",
                                     "orientation \(orientation) baked: the samples were re-encoded losslessly in displayed orientation"))
        }

        var out = OutputPlan()
        out.append(PNGStructure.signature)
        var wroteImage = false
        for (index, chunk) in structure.chunks.enumerated() {
            if let baked {
                switch chunk.type {
                case "IHDR":
                    out.append(baked.header)
                    continue
                case "IDAT":
                    if !wroteImage { (baked.animation ?? baked.idat).forEach { out.append($0) } }
                    wroteImage = true
                    continue
                case "fcTL" where baked.animation != nil, "fdAT" where baked.animation != nil:
                    // The turned animation goes out whole where its first frame stood.
                    if !wroteImage { baked.animation?.forEach { out.append($0) } }
                    wroteImage = true
                    continue
                case "pHYs" where baked.transposed && chunk.length == 9:
                    let data = try input.read(at: chunk.dataOffset, count: 9)
                    out.append(PNGStructure.chunk("pHYs", Array(data[4..<8] + data[0..<4] + data[8...])))
                    continue
                default:
                    break
                }
            }
            switch layout.contents[index] {
            case nil:
                // An image or colour chunk: its data is what the content check compares (when the samples were
                // turned, it compares decoded pixels instead, and the chunk is structure the scan walked).
                out.copy(chunk.offset..<chunk.dataOffset, because: .structure)
                out.copy(chunk.dataOffset..<chunk.end - 4, because: baked == nil ? .codedData : .structure)
                out.copy(chunk.end - 4..<chunk.end, because: .structure)
            case .item(let item)?:
                if plan.keeps(item) { out.copy(chunk.range, because: .keptItem(item)) }
            case .iccProfile(let profile, let name, let nameLength, let text)?:
                guard plan.keeps(profile) else { continue }
                if let text, let blanked = text.blanked(keeps: plan.keeps) {
                    text.record(keeps: plan.keeps, into: &result)
                    let label = name.map(plan.keeps) ?? true
                        ? try input.read(at: chunk.dataOffset, count: nameLength) : Array(PNGScanner.neutralProfileName.utf8)
                    out.append(PNGStructure.chunk("iCCP", label + [0, 0] + (try Zlib.deflate(blanked))))
                } else if let name, !plan.keeps(name) {
                    let data = try input.read(at: chunk.dataOffset + Int64(nameLength), count: Int(chunk.length) - nameLength)
                    out.append(PNGStructure.chunk("iCCP", Array(PNGScanner.neutralProfileName.utf8) + data))
                } else {
                    out.copy(chunk.range, because: .structure)
                }
            case .trimmed(let item, let keep)?:
                if plan.keeps(item) {
                    out.copy(chunk.range, because: .structure)
                } else if keep > 0 {
                    out.append(PNGStructure.chunk(chunk.type, try input.read(at: chunk.dataOffset, count: Int(keep))))
                }
            case .orientation(let item)?:
                // Once the samples are oriented, an ImageMagick orNT would rotate them a second time.
                if baked != nil {
                    result.outcomes[item] = .removed
                } else if plan.keeps(item) {
                    out.copy(chunk.range, because: .structure)
                }
            case .xmp(let packet, let keys, let keyword)?:
                guard let rebuilt = try XMPItems.rebuild(packet: packet, keys: keys, keeps: plan.keeps) else { continue }
                if rebuilt == packet {
                    out.copy(chunk.range, because: .structure)
                } else {
                    out.append(PNGStructure.chunk("iTXt", PNGText.iTXtData(keyword: keyword, text: rebuilt)))
                }
            case .exif(let payload)?:
                // Only the first eXIf's orientation is applied by viewers; any other goes by its own disposition.
                switch payload.rewrite(plan: plan, keepOrientation: index == layout.exifChunk ? keepOrientation : nil, notes: &result.notes) {
                case .copy: out.copy(chunk.range, because: .structure)
                case .drop: break
                case .replace(let tiff): out.append(PNGStructure.chunk("eXIf", tiff))
                }
            }
        }
        if let trailer = structure.trailer, let item = layout.trailerItem, plan.keeps(item) {
            out.copy(trailer, because: .keptItem(item))
        }
        result.ledger = try out.write(from: input, to: output)
        return result
    }

    public func verifyContent(original: any ByteSource, _ before: PNGLayout, cleaned: any ByteSource, _ after: PNGLayout, result: CleanResult) throws -> ContentCheck {
        if result.method == .losslessTransform {
            let orientation = before.exif?.orientation ?? 1
            let check = try decodedPixels(original: original, orientation: orientation, cleaned: cleaned, header: before.structure.header,
                                          method: "decoded pixels identical to the original displayed with orientation \(orientation)")
            guard check.passed, before.structure.isAnimated else { return check }
            // libpng decodes the default image only; every frame is re-read from both files.
            let method = check.method + "; every APNG frame's samples and placement turned alike"
            if let failure = try APNGOrientation.verify(original: original, before.structure, cleaned: cleaned, after.structure,
                                                        orientation: orientation) {
                return ContentCheck(method: method, passed: false, detail: failure)
            }
            return ContentCheck(method: method, passed: true)
        }
        let method = "image chunks (IHDR, PLTE, IDAT, fcTL/fdAT, colour chunks) byte-identical"
        let left = imageChunks(before), right = imageChunks(after)
        guard left.map(\.type) == right.map(\.type) else {
            return ContentCheck(method: method, passed: false, detail: "image chunk sequence changed")
        }
        var identical = IdenticalRanges()
        for (x, y) in zip(left, right) {
            guard try ByteComparison.equal(original, x.data, cleaned, y.data) else {
                return ContentCheck(method: method, passed: false, detail: "\(x.type) chunk at \(x.offset) differs")
            }
            identical.add(x.data, y.data)
        }
        // Identical image and colour chunks decode to identical pixels: decoding both (a quarter of a second for a
        // full-HD image) would prove nothing more. The compared chunk data is the residue proof's to skip (searching
        // the IDAT data again was half of a PNG batch's CPU, issue 25 round 3).
        var check = ContentCheck(method: method, passed: true)
        check.identical = identical.pairs
        return check
    }

    /// The image chunks and the data of each that is image (a trimmed chunk's up to its unknown tail).
    private func imageChunks(_ layout: PNGLayout) -> [(type: String, offset: Int64, data: Range<Int64>)] {
        layout.structure.chunks.indices.compactMap { index in
            let chunk = layout.structure.chunks[index]
            switch layout.contents[index] {
            case nil: return (chunk.type, chunk.offset, chunk.dataOffset..<chunk.end - 4)
            case .trimmed(_, let keep)? where keep > 0:
                return (chunk.type, chunk.offset, chunk.dataOffset..<chunk.dataOffset + keep)
            default: return nil
            }
        }
    }

    /// Both files decoded by libpng, the original with `orientation` applied, compared sample for sample.
    private func decodedPixels(original: any ByteSource, orientation: Int, cleaned: any ByteSource, header: PNGStructure.Header,
                               method: String) throws -> ContentCheck {
        guard header.width * header.height <= Self.decodeLimit else {
            // Only a re-encode needs the decode; a remux was already compared chunk by chunk.
            return ContentCheck(method: method, passed: orientation == 1,
                                detail: orientation == 1 ? "pixel decode skipped (image too large)" : "too large to verify")
        }
        let a = try PNGDecoder.decodeRGBA16(original.readAll())
        let b = try PNGDecoder.decodeRGBA16(cleaned.readAll())
        let expected = PixelOrientation.apply(orientation, width: a.width, height: a.height, pixels: a.pixels, channels: 4)
        guard expected.width == b.width, expected.height == b.height else {
            return ContentCheck(method: method, passed: false, detail: "size \(b.width)×\(b.height), expected \(expected.width)×\(expected.height)")
        }
        guard expected.pixels == b.pixels else {
            let differing = zip(expected.pixels, b.pixels).reduce(0) { $0 + ($1.0 != $1.1 ? 1 : 0) }
            return ContentCheck(method: method, passed: false, detail: "\(differing) of \(b.pixels.count) samples differ")
        }
        return ContentCheck(method: method, passed: true)
    }
}

extension PNGFormat {
    /// An orientation the policy bakes is kept where the samples cannot be re-encoded (size limits).
    public func settle(_ findings: [Finding], input: any ByteSource, scan: ScanResult<PNGLayout>, policy: Policy) throws -> [Finding] {
        let layout = scan.layout
        guard let exif = layout.exif, let item = exif.orientationItem,
              findings.indices.contains(item), findings[item].disposition == .bake,
              let orientation = exif.orientation, (2...8).contains(orientation),
              let refusal = PNGOrientation.refusal(layout.structure) else { return findings }
        var settled = findings
        settled.keep(item, because: refusal)
        return settled
    }
}
