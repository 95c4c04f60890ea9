// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// What the GIF scanner learned about each metadata block, kept for the cleaner.
public struct GIFLayout: Sendable {
    enum Content {
        /// The block stays exactly when this item is kept (comments, ICC, unknown extensions).
        case item(Int)
        case xmp(packet: [UInt8], keys: [Int: String])
        /// A block a decoder reads (a graphic control, a looping extension) with sub-blocks after its fields: those
        /// are the item; without them the block is `exact`.
        case trimmed(item: Int, exact: [UInt8])
    }

    var structure: GIFStructure
    var contents: [Int: Content] = [:]
    var trailerItem: Int?
}

/// GIF: block-level remux. The screen descriptor, colour tables, graphic controls, images (LZW data),
/// plain-text extensions and the looping extensions are copied byte for byte; comments, XMP, other
/// application extensions and bytes after the trailer are removed as the policy says.
public struct GIFFormat: FormatHandler {
    public init() {}

    /// Application extensions that only control animation.
    static let loopingApplications: Set<String> = ["NETSCAPE2.0", "ANIMEXTS1.0"]
    static let xmpApplication = "XMP DataXMP"
    static let iccApplication = "ICCRGBG1012"
    static let parseLimit = 64 << 20
    /// XMP in GIF ends with a 257-byte "magic trailer" (0x01, 0xFF … 0x00) that makes its raw bytes parse as sub-blocks.
    static let xmpMagicTrailer: [UInt8] = [0x01] + (0...255).reversed().map { UInt8($0) }

    public func scan(_ input: any ByteSource, options: ScanOptions) throws -> ScanResult<GIFLayout> {
        let structure = try GIFStructure.parse(input)
        var layout = GIFLayout(structure: structure)
        var found = ItemCollector(options)
        var comments = 0, applications = 0
        for (index, block) in structure.blocks.enumerated() {
            func add(_ key: String, _ category: Category, location: String, value: String? = nil, detail: String, unknown: Bool = false) {
                layout.contents[index] = .item(found.add(key, category, block.range, location: location, value: value, detail: detail,
                                                         unknown: unknown))
            }
            switch block.kind {
            case .image:
                continue
            case .graphicControl:
                // Block size 4 and four bytes of fields, then the terminator: anything else is no field.
                try trim(index, block, fields: 4, at: block.range.lowerBound + 2, what: "graphic control", input, &layout, &found)
            case .plainText:
                let value = options.includeValues ? String(decoding: try GIFStructure.subBlockData(input, block, limit: 212).dropFirst(12),
                                                           as: UTF8.self) : nil
                add("gif:plainText", .content, location: "plainText#\(index)", value: value,
                    detail: "plain text extension, \(block.range.count) bytes (text over the image; viewers ignore it)")
            case .comment:
                comments += 1
                let value = options.includeValues ? String(decoding: try GIFStructure.subBlockData(input, block, limit: 200), as: UTF8.self) : nil
                add("gif:comment", .content, location: "comment#\(comments)", value: value, detail: "comment extension, \(block.range.count) bytes")
                // Kept or dropped whole: a position written into the comment decides it.
                found.inspect(found.next - 1, payload: try GIFStructure.subBlockData(input, block, limit: ContentInspector.limit), origin: block.range.lowerBound)
            case .application(let ident) where Self.loopingApplications.contains(ident):
                // One sub-block: id 1 with the loop count (3 bytes) or id 2 with the buffer size (5 bytes).
                let head = try input.read(at: block.dataStart, count: min(2, Int(block.range.upperBound - block.dataStart)))
                let fields = head.count == 2 && head[1] == 2 ? 5 : 3
                try trim(index, block, fields: fields, at: block.dataStart, what: ident, input, &layout, &found)
            case .application(let ident):
                applications += 1
                let location = "application#\(applications)(\(ident))"
                if ident == Self.xmpApplication, block.range.count <= Self.parseLimit {
                    let raw = try input.read(at: block.dataStart, count: Int(block.range.upperBound - 1 - block.dataStart))
                    let packet = Self.xmpPacket(raw)
                    let keys = found.xmp(packet, location: "\(location)/XMP", origin: block.dataStart)
                    layout.contents[index] = .xmp(packet: packet, keys: keys)
                } else if ident == Self.iccApplication {
                    add("icc:profile", .rendering, location: location, detail: "ICC profile (application extension), \(block.range.count) bytes")
                } else {
                    let name = ident.isEmpty ? "unnamed" : ident
                    add("gif:app:\(name)", NameClassifier.category(of: name, otherwise: .content), location: location,
                        detail: "application extension \"\(name)\", \(block.range.count) bytes", unknown: true)
                }
            case .otherExtension(let label):
                add("gif:extension:0x\(String(label, radix: 16, uppercase: true))", .content, location: "extension#\(index)",
                    detail: "unknown extension 0x\(String(label, radix: 16)), \(block.range.count) bytes", unknown: true)
            }
        }
        if let trailer = structure.trailer {
            layout.trailerItem = try found.trailer("gif:trailer", trailer, in: input, location: "after trailer 0x3B", after: "the GIF trailer")
        }
        return found.result(layout)
    }

    /// A block whose first sub-block (at `at`) holds `fields` bytes a decoder reads: any other byte before the
    /// terminator (a longer first sub-block, more sub-blocks) is an `unknown` item, and the block without it is
    /// written field by field. A first sub-block shorter than its fields is left to the decoder.
    private func trim(_ index: Int, _ block: GIFStructure.Block, fields: Int, at: Int64, what: String, _ input: any ByteSource,
                      _ layout: inout GIFLayout, _ found: inout ItemCollector) throws {
        let exactEnd = at + 1 + Int64(fields) + 1
        guard exactEnd < block.range.upperBound else { return }
        let size = try input.read(at: at, count: 1)[0]
        guard Int(size) >= fields else { return }
        let head = try input.read(at: block.range.lowerBound, count: Int(at - block.range.lowerBound))
        let body = try input.read(at: at + 1, count: fields)
        let slack = (at + 1 + Int64(fields))..<(block.range.upperBound - 1)
        let name = what.filter { $0.isLetter || $0.isNumber }
        let item = found.add("gif:\(name)-slack", .content, slack, location: "\(what)#\(index)/slack",
                             detail: "\(slack.count) bytes after the \(what) fields", unknown: true)
        layout.contents[index] = .trimmed(item: item, exact: head + [UInt8(fields)] + body + [0])
    }

    /// The packet inside an XMP application extension's raw bytes (sub-block terminator excluded).
    static func xmpPacket(_ raw: [UInt8]) -> [UInt8] {
        if raw.count >= xmpMagicTrailer.count, Array(raw.suffix(xmpMagicTrailer.count)) == xmpMagicTrailer {
            return Array(raw.dropLast(xmpMagicTrailer.count))
        }
        // A writer that left the magic trailer out or damaged it: cut after the closing processing instruction.
        let end = Array("<?xpacket end".utf8)
        if let at = raw.firstRange(of: end), let close = raw[at.upperBound...].firstRange(of: [0x3F, 0x3E]) {
            return Array(raw[..<close.upperBound])
        }
        return raw
    }

    /// A complete XMP application extension for a rebuilt packet.
    static func xmpExtension(_ packet: [UInt8]) -> [UInt8] {
        [0x21, 0xFF, 0x0B] + Array(xmpApplication.utf8) + packet + xmpMagicTrailer + [0x00]
    }

    public func clean(_ input: any ByteSource, scan: ScanResult<GIFLayout>, plan: CleanPlan, to output: any OutputSink) throws -> CleanResult {
        let layout = scan.layout
        let structure = layout.structure
        var out = OutputPlan()
        out.copy(structure.screen, because: .codedData)
        for (index, block) in structure.blocks.enumerated() {
            switch layout.contents[index] {
            case nil:
                out.copy(block.range, because: .codedData)
            case .item(let item)?:
                if plan.keeps(item) { out.copy(block.range, because: .keptItem(item)) }
            case .trimmed(let item, let exact)?:
                if plan.keeps(item) { out.copy(block.range, because: .structure) } else { out.append(exact) }
            case .xmp(let packet, let keys)?:
                guard let rebuilt = try XMPItems.rebuild(packet: packet, keys: keys, keeps: plan.keeps) else { continue }
                // A rebuilt packet must not contain a NUL, which would end the sub-block walk early.
                if rebuilt == packet || rebuilt.contains(0) { out.copy(block.range, because: .structure) } else { out.append(Self.xmpExtension(rebuilt)) }
            }
        }
        out.append([0x3B])
        if let trailer = structure.trailer, let item = layout.trailerItem, plan.keeps(item) {
            out.copy(trailer, because: .keptItem(item))
        }
        return CleanResult(method: .remux, ledger: try out.write(from: input, to: output))
    }

    public func verifyContent(original: any ByteSource, _ before: GIFLayout, cleaned: any ByteSource, _ after: GIFLayout, result: CleanResult) throws -> ContentCheck {
        let method = "screen descriptor, colour tables, graphic controls and image blocks (LZW data) byte-identical"
        var identical = IdenticalRanges()
        guard try ByteComparison.equal(original, before.structure.screen, cleaned, after.structure.screen, skipping: [], proving: &identical) else {
            return ContentCheck(method: method, passed: false, detail: "logical screen or global colour table differs")
        }
        // A trimmed block is compared as its fields alone (`exact`), in either file.
        func image(_ layout: GIFLayout) -> [(block: GIFStructure.Block, exact: [UInt8]?)] {
            layout.structure.blocks.indices.compactMap { index in
                switch layout.contents[index] {
                case nil: (layout.structure.blocks[index], nil)
                case .trimmed(_, let exact)?: (layout.structure.blocks[index], exact)
                default: nil
                }
            }
        }
        let left = image(before), right = image(after)
        guard left.count == right.count else {
            return ContentCheck(method: method, passed: false, detail: "\(left.count) image blocks became \(right.count)")
        }
        for (x, y) in zip(left, right) {
            let same = x.exact != nil || y.exact != nil
                ? try (x.exact ?? original.read(at: x.block.range.lowerBound, count: x.block.range.count))
                    == (y.exact ?? cleaned.read(at: y.block.range.lowerBound, count: y.block.range.count))
                : try ByteComparison.equal(original, x.block.range, cleaned, y.block.range, skipping: [], proving: &identical)
            guard x.block.kind == y.block.kind, same else {
                return ContentCheck(method: method, passed: false, detail: "block at \(x.block.range.lowerBound) differs")
            }
        }
        return ContentCheck(method: method, passed: true, identical: identical)
    }
}
