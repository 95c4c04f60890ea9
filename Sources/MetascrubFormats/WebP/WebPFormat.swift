// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// What the WebP scanner learned about each metadata chunk, kept for the cleaner.
public struct WebPLayout: Sendable {
    enum Content {
        /// The chunk stays exactly when this item is kept (ICCP, unknown chunks, unparsed EXIF).
        case item(Int)
        case xmp(packet: [UInt8], keys: [Int: String])
        case exif(ExifPayload)
        /// An image chunk with bytes that are no part of the image (after ANIM's fields, chunks nested in an ANMF
        /// frame other than ALPH and VP8/VP8L): those are the item; without them the chunk is `exact`.
        case trimmed(item: Int, exact: [UInt8])
        /// An ICCP chunk whose profile has text tags: blanked in place when the policy removes them.
        case icc(item: Int, text: ICCTextEdit)
    }

    var structure: WebPStructure
    var contents: [Int: Content] = [:]
    var trailerItem: Int?
    /// The first EXIF chunk and the chunk index it came from.
    var exif: ExifPayload?
    var exifChunk: Int?
}

/// WebP (simple and extended, still and animated): RIFF chunk-level remux. VP8/VP8L/ALPH/ANIM/ANMF are
/// copied byte for byte; the VP8X flags and the RIFF size are rewritten to match the chunks that stay.
public struct WebPFormat: FormatHandler {
    public init() {}

    static let imageChunks: Set<String> = ["VP8X", "VP8 ", "VP8L", "ALPH", "ANIM", "ANMF"]
    static let parseLimit: Int64 = 64 << 20

    enum Flag {
        static let icc: UInt8 = 0x20
        static let exif: UInt8 = 0x08
        static let xmp: UInt8 = 0x04
    }

    public func scan(_ input: any ByteSource, options: ScanOptions) throws -> ScanResult<WebPLayout> {
        let structure = try WebPStructure.parse(input, tolerateDamage: options.tolerateDamage)
        var layout = WebPLayout(structure: structure)
        var found = ItemCollector(options)
        if let damage = structure.damage {
            try found.damaged(damage, at: structure.riffEnd, "the RIFF form is damaged after the image (\(damage.description)); it is taken to end at \(structure.riffEnd) and anything after is trailing data, removed unless the policy keeps trailers")
        }
        var count: [String: Int] = [:]
        for (index, chunk) in structure.chunks.enumerated() where !Self.imageChunks.contains(chunk.id) {
            count[chunk.id, default: 0] += 1
            let name = chunk.id.trimmingSuffixSpaces
            let location = "\(name)#\(count[chunk.id]!)"
            func add(_ key: String, _ category: Category, detail: String, unknown: Bool = false) -> Int {
                found.add(key, category, location: location, offset: chunk.offset, length: chunk.size + 8, detail: detail, unknown: unknown)
            }
            let parseable = chunk.size <= Self.parseLimit
            switch chunk.id {
            case "EXIF" where parseable:
                let data = try input.read(at: chunk.payloadOffset, count: Int(chunk.size))
                layout.addExifChunk(index, data, origin: chunk.payloadOffset, location: location, into: &found)
            case "XMP " where parseable:
                let packet = try input.read(at: chunk.payloadOffset, count: Int(chunk.size))
                let keys = found.xmp(packet, location: "\(location)/XMP", origin: chunk.payloadOffset)
                layout.contents[index] = .xmp(packet: packet, keys: keys)
            case "ICCP":
                let item = add("icc:profile", .rendering, detail: "ICC profile (ICCP), \(chunk.size) bytes")
                layout.contents[index] = .item(item)
                let profile = parseable ? try input.read(at: chunk.payloadOffset, count: Int(chunk.size)) : []
                if parseable, let text = ICCTextEdit(profile, parent: item, location: "\(location)/ICC", into: &found) {
                    layout.contents[index] = .icc(item: item, text: text)
                }
            case "C2PA" where parseable:
                let store = add("jumbf:c2pa", .provenance, detail: "C2PA manifest store (C2PA chunk)")
                layout.contents[index] = .item(store)
                try found.c2pa(try input.read(at: chunk.payloadOffset, count: Int(chunk.size)), store: store,
                               placement: .contiguous(chunk.payloadOffset), source: input)
            default:
                let category = NameClassifier.category(of: name, otherwise: .content)
                layout.contents[index] = .item(add("webp:chunk:\(name)", category, detail: "\(chunk.size)-byte \(name) chunk", unknown: true))
            }
        }
        for (index, chunk) in structure.chunks.enumerated() where ["VP8X", "ANIM", "ANMF"].contains(chunk.id) {
            try trim(index, chunk, input, &layout, &found)
        }
        if let trailer = structure.trailer {
            layout.trailerItem = try found.trailer("webp:trailer", trailer, in: input, location: "after RIFF form", after: "the RIFF form")
        }
        return found.result(layout)
    }

    /// Bytes of VP8X's fields (flags, canvas size), ANIM's (background colour, loop count) and of an ANMF frame's
    /// header (offsets, size, duration, flags) before its frame data.
    static let canvasFields = 10
    static let animFields = 6
    static let frameHeader = 16
    static let frameData: Set<String> = ["ALPH", "VP8 ", "VP8L"]

    /// VP8X or ANIM with bytes after its fields, or an ANMF frame holding chunks that are no frame data: an `unknown`
    /// item (nested chunks one each), and the chunk as it is written without them.
    private func trim(_ index: Int, _ chunk: WebPStructure.Chunk, _ input: any ByteSource, _ layout: inout WebPLayout,
                      _ found: inout ItemCollector) throws {
        guard chunk.size <= Self.parseLimit else { return }
        let fields = Int64(chunk.id == "VP8X" ? Self.canvasFields
            : chunk.id == "ANIM" ? Self.animFields : Self.frameHeader)
        guard chunk.size > fields else { return }
        let payload = try input.read(at: chunk.payloadOffset, count: Int(chunk.size))
        var kept = Array(payload[..<Int(fields)])
        var strays: [Range<Int64>] = []
        if chunk.id != "ANMF" {
            strays.append(chunk.payloadOffset + fields..<chunk.payload.upperBound)
        } else {
            var at = Int(fields)
            while at < payload.count {
                guard at + 8 <= payload.count else {
                    strays.append(chunk.payloadOffset + Int64(at)..<chunk.payload.upperBound)
                    break
                }
                let id = String(decoding: payload[at..<at + 4], as: UTF8.self)
                let size = Int(ByteOrder.little.u32(payload, at + 4))
                let end = min(payload.count, at + 8 + size + (size & 1))
                if Self.frameData.contains(id), at + 8 + size <= payload.count {
                    kept += Array(payload[at..<end])
                } else {
                    strays.append(chunk.payloadOffset + Int64(at)..<chunk.payloadOffset + Int64(end))
                }
                at = end
            }
        }
        guard let first = strays.first else { return }
        let range = first.lowerBound..<strays.last!.upperBound
        let what = chunk.id != "ANMF" ? "bytes after the \(chunk.id) fields"
            : "chunks nested in an ANMF frame that are no frame data"
        let item = found.add("webp:\(chunk.id)-unknown", .content, range, location: "\(chunk.id)#\(index)/unknown",
                             detail: "\(range.count) \(what)", unknown: true)
        layout.contents[index] = .trimmed(item: item, exact: Self.chunk(chunk.id, kept))
    }

    public func clean(_ input: any ByteSource, scan: ScanResult<WebPLayout>, plan: CleanPlan, to output: any OutputSink) throws -> CleanResult {
        let layout = scan.layout
        var result = CleanResult(method: .remux)
        // First what each chunk becomes, then the VP8X flags that match, then the bytes.
        // A copied chunk carries why its payload may stay; its 8-byte header is structure.
        enum Written { case chunk(WebPStructure.Chunk, LedgerReason), bytes([UInt8]), canvas([UInt8]) }
        var written: [Written] = []
        var present = Set<String>()
        let chunks = layout.structure.chunks
        for (index, chunk) in chunks.enumerated() {
            switch layout.contents[index] {
            case nil:
                written.append(.chunk(chunk, .codedData))
            case .item(let item)?:
                guard plan.keeps(item) else { continue }
                written.append(.chunk(chunk, .keptItem(item)))
                present.insert(chunk.id)
            case .icc(let item, let text)?:
                guard plan.keeps(item) else { continue }
                if let blanked = text.blanked(keeps: plan.keeps) {
                    text.record(keeps: plan.keeps, into: &result)
                    written.append(.bytes(Self.chunk("ICCP", blanked)))
                } else {
                    written.append(.chunk(chunk, .keptItem(item)))
                }
                present.insert(chunk.id)
            case .trimmed(let item, let exact)?:
                if plan.keeps(item) {
                    written.append(.chunk(chunk, .structure))
                } else {
                    // VP8X's flags are set below from the chunks that stay, whichever way it is written.
                    let fields = Array(exact[8..<min(exact.count, 8 + Self.canvasFields)])
                    written.append(chunk.id == "VP8X" ? .canvas(fields) : .bytes(exact))
                }
            case .xmp(let packet, let keys)?:
                guard let rebuilt = try XMPItems.rebuild(packet: packet, keys: keys, keeps: plan.keeps) else { continue }
                written.append(rebuilt == packet ? .chunk(chunk, .structure) : .bytes(Self.chunk("XMP ", rebuilt)))
                present.insert("XMP ")
            case .exif(let payload)?:
                switch payload.rewrite(plan: plan, keepOrientation: nil, notes: &result.notes) {
                case .copy: written.append(.chunk(chunk, .structure))
                case .drop: continue
                // An "Exif\0\0" prefix the original used stays: viewers that expect it still find the orientation.
                case .replace(let tiff): written.append(.bytes(Self.chunk("EXIF", payload.header + tiff)))
                }
                present.insert("EXIF")
            }
        }

        var body = OutputPlan()
        for piece in written {
            switch piece {
            case .chunk(let chunk, _) where chunk.id == "VP8X" && chunk.size >= 10:
                let fields = try input.read(at: chunk.payloadOffset, count: Int(chunk.size))
                body.append(Self.canvas(fields, present: present))
            case .canvas(let payload):
                body.append(Self.canvas(payload, present: present))
            case .chunk(let chunk, let reason):
                body.copy(offset: chunk.offset, count: 8, because: .structure)
                body.copy(offset: chunk.payloadOffset, count: chunk.size, because: reason)
                // The pad byte of an odd-sized chunk is written as zero, whatever the source held there.
                if chunk.size & 1 == 1 { body.append([0], because: .padding) }
            case .bytes(let bytes):
                body.append(bytes)
            }
        }
        guard body.size + 4 <= 0xFFFF_FFFF else {
            throw MetascrubError.limitExceeded(format: "WebP", path: "RIFF form", offset: 0, limit: "4 GiB")
        }
        var out = OutputPlan()
        out.append(Array("RIFF".utf8) + ByteOrder.little.bytes(UInt32(body.size + 4)) + Array("WEBP".utf8))
        out.append(contentsOf: body)
        if let trailer = layout.structure.trailer, let item = layout.trailerItem, plan.keeps(item) {
            out.copy(trailer, because: .keptItem(item))
        }
        result.ledger = try out.write(from: input, to: output)
        return result
    }

    /// The VP8X chunk with its metadata flags saying which metadata chunks stay.
    static func canvas(_ fields: [UInt8], present: Set<String>) -> [UInt8] {
        var payload = fields
        payload[0] &= ~(Flag.icc | Flag.exif | Flag.xmp)
        if present.contains("ICCP") { payload[0] |= Flag.icc }
        if present.contains("EXIF") { payload[0] |= Flag.exif }
        if present.contains("XMP ") { payload[0] |= Flag.xmp }
        return chunk("VP8X", payload)
    }

    static func chunk(_ id: String, _ payload: [UInt8]) -> [UInt8] {
        Array(id.utf8) + ByteOrder.little.bytes(UInt32(payload.count)) + payload + (payload.count & 1 == 1 ? [0] : [])
    }

    public func verifyContent(original: any ByteSource, _ before: WebPLayout, cleaned: any ByteSource, _ after: WebPLayout, result: CleanResult) throws -> ContentCheck {
        let method = "VP8/VP8L/ALPH/ANIM/ANMF payloads and the VP8X canvas byte-identical"
        // A trimmed chunk is compared as it is written without its unknown part (`exact`), in either file.
        func image(_ layout: WebPLayout) -> [(chunk: WebPStructure.Chunk, exact: [UInt8]?)] {
            layout.structure.chunks.indices.compactMap { index in
                switch layout.contents[index] {
                case nil: (layout.structure.chunks[index], nil)
                case .trimmed(_, let exact)?: (layout.structure.chunks[index], exact)
                default: nil
                }
            }
        }
        let leftTrimmed = image(before), rightTrimmed = image(after)
        guard leftTrimmed.map(\.chunk.id) == rightTrimmed.map(\.chunk.id) else {
            return ContentCheck(method: method, passed: false, detail: "image chunk sequence changed")
        }
        var left: [WebPStructure.Chunk] = [], right: [WebPStructure.Chunk] = []
        var identical = IdenticalRanges()
        for (x, y) in zip(leftTrimmed, rightTrimmed) {
            guard x.exact != nil || y.exact != nil else { left.append(x.chunk); right.append(y.chunk); continue }
            func payload(_ exact: [UInt8]) -> [UInt8] { Array(exact[8..<8 + Int(ByteOrder.little.u32(exact, 4))]) }
            var a = try x.exact.map(payload) ?? original.read(at: x.chunk.payloadOffset, count: Int(x.chunk.size))
            var b = try y.exact.map(payload) ?? cleaned.read(at: y.chunk.payloadOffset, count: Int(y.chunk.size))
            if x.chunk.id == "VP8X", !a.isEmpty, !b.isEmpty {
                // The metadata flags follow the chunks that stay.
                a[0] &= ~(Flag.icc | Flag.exif | Flag.xmp)
                b[0] &= ~(Flag.icc | Flag.exif | Flag.xmp)
            }
            guard a == b else {
                return ContentCheck(method: method, passed: false, detail: "\(x.chunk.id) chunk at \(x.chunk.offset) differs")
            }
        }
        for (x, y) in zip(left, right) {
            // VP8X: everything but the metadata flags must match (alpha, animation, canvas size).
            let skip: Int64 = x.id == "VP8X" ? 1 : 0
            if skip == 1 {
                let a = try original.read(at: x.payloadOffset, count: 1)[0], b = try cleaned.read(at: y.payloadOffset, count: 1)[0]
                let mask = ~(Flag.icc | Flag.exif | Flag.xmp)
                guard a & mask == b & mask else { return ContentCheck(method: method, passed: false, detail: "VP8X alpha/animation flags changed") }
            }
            guard x.size == y.size,
                  try ByteComparison.equal(original, x.payloadOffset + skip..<x.payload.upperBound, cleaned,
                                           y.payloadOffset + skip..<y.payload.upperBound, skipping: [], proving: &identical) else {
                return ContentCheck(method: method, passed: false, detail: "\(x.id) chunk at \(x.offset) differs")
            }
        }
        return ContentCheck(method: method, passed: true, identical: identical)
    }
}

extension String {
    /// "XMP " → "XMP": FourCCs pad with spaces.
    var trimmingSuffixSpaces: String {
        var s = Substring(self)
        while s.last == " " { s = s.dropLast() }
        return String(s)
    }
}

extension WebPFormat {
    /// An orientation the policy bakes is kept: turning VP8/VP8L data means re-encoding it.
    public func settle(_ findings: [Finding], input: any ByteSource, scan: ScanResult<WebPLayout>, policy: Policy) throws -> [Finding] {
        let layout = scan.layout
        guard let exif = layout.exif, let item = exif.orientationItem,
              findings.indices.contains(item), findings[item].disposition == .bake,
              let orientation = exif.orientation, (2...8).contains(orientation) else { return findings }
        var settled = findings
        let lossless = layout.structure.chunks.contains { $0.id == "VP8L" }
        // With re-encoding allowed a still image keeps its bake: the cleaner re-encodes it (`reencodableBake`).
        if policy.allowReencode, Self.isStill(layout) { return settled }
        settled.keep(item, because: lossless
            ? "rotating VP8L data needs a lossless WebP re-encode, which the policy does not allow"
            : "rotating lossy VP8 data would re-encode it")
        return settled
    }

    /// An orientation to bake by re-encoding (`reencode: true`) in a still image; animations keep the tag.
    public func reencodableBake(input: any ByteSource, scan: ScanResult<WebPLayout>, plan: CleanPlan) -> ReencodableBake? {
        let layout = scan.layout
        guard let exif = layout.exif, let item = exif.orientationItem,
              plan.findings.indices.contains(item), plan.disposition(item) == .bake,
              let orientation = exif.orientation, (2...8).contains(orientation), Self.isStill(layout) else { return nil }
        let lossless = layout.structure.chunks.contains { $0.id == "VP8L" }
        return ReencodableBake(coding: .webp(lossless: lossless), orientation: orientation, item: item,
                               reason: lossless ? "WebP has no lossless rotation of VP8L data; re-encoded losslessly"
                                                : "WebP has no lossless rotation of lossy VP8 data")
    }

    static func isStill(_ layout: WebPLayout) -> Bool {
        !layout.structure.chunks.contains { $0.id == "ANIM" || $0.id == "ANMF" }
    }
}
