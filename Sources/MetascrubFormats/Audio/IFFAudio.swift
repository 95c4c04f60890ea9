// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// What a WAV/AIFF chunk is, decided by the format's table.
enum IFFChunkKind {
    /// Sample data and what a decoder needs (fmt, data, COMM, SSND, cue, MARK...): kept, compared on verify.
    case structure
    /// JUNK/PAD/FLLR: dropped; reported only when it holds non-zero bytes (leftovers of earlier metadata).
    case filler
    /// RIFF LIST: INFO lists are split into their subchunks, other list types are one item.
    case list
    case xmp
    case id3
    case item(key: String, category: Category, detail: String, unknown: Bool)

    /// A chunk the table knows: one item.
    static func known(_ key: String, _ category: Category, _ detail: String) -> IFFChunkKind {
        .item(key: key, category: category, detail: detail, unknown: false)
    }

    /// A chunk the table does not know: one unknown item, classified by its name.
    static func unknown(_ id: String, namespace: String) -> IFFChunkKind {
        let name = id.trimmingSuffixSpaces
        return .item(key: "\(namespace):chunk:\(name)", category: NameClassifier.category(of: name, otherwise: .content),
                     detail: "unknown \(name) chunk", unknown: true)
    }
}

/// The scanner's view of a WAV/AIFF file for the cleaner: what each chunk became.
public struct IFFLayout: Sendable {
    enum Content {
        case structure
        /// A structure chunk with bytes after its fields: written with its fields only unless the item is kept.
        case trimmed(item: Int, payload: [UInt8])
        case drop
        case item(Int)
        /// LIST INFO: the list type and each subchunk (range in the file, item).
        case info([(range: Range<Int64>, item: Int)])
        case xmp(packet: [UInt8], keys: [Int: String])
        case id3(ID3Tag)
    }

    var form: IFFForm
    var contents: [Content]
    var trailerItem: Int?
}

/// Chunk-level remux shared by WAV (RIFF/RF64) and AIFF (FORM): metadata chunks are removed or rebuilt, the
/// form size (and RF64's ds64 RIFF size) rewritten, sample chunks copied byte for byte.
struct IFFAudio {
    var format: String
    /// Key namespace: "riff" or "aiff".
    var namespace: String
    var forms: Set<String>
    var classify: @Sendable (String) -> IFFChunkKind

    static let parseLimit: Int64 = 16 << 20
    /// The chunks a cut file may end inside: sample data, which holds no metadata.
    static let sampleData: Set<String> = ["data", "SSND"]

    /// Inspects the bytes an item covers (a RIFF INFO subchunk: its header is part of the range).
    func inspectRange(_ i: Int, _ input: any ByteSource, _ found: inout ItemCollector) throws {
        guard let offset = found.items[i].offset, let length = found.items[i].length, length <= Int64(ContentInspector.limit) else { return }
        found.inspect(i, payload: try input.read(at: offset, count: Int(length)), origin: offset)
    }

    func scan(_ input: any ByteSource, options: ScanOptions) throws -> ScanResult<IFFLayout> {
        let form = try IFFForm.parse(input, format: format, forms: forms, cutChunks: options.tolerateDamage ? Self.sampleData : [])
        var found = ItemCollector(options)
        if let damage = form.damage {
            try found.damaged(damage, at: form.fileSize,
                              "the file ends inside or after its sample data (\(damage.description)); the samples that are there are copied byte for byte and compared")
        }
        var contents: [IFFLayout.Content] = []
        var seen: [String: Int] = [:]
        for chunk in form.chunks {
            seen[chunk.id, default: 0] += 1
            let name = chunk.id.trimmingSuffixSpaces
            let location = "\(name)#\(seen[chunk.id] ?? 1)"
            func add(_ key: String, _ category: Category, _ detail: String, unknown: Bool = false) -> IFFLayout.Content {
                .item(found.add(key, category, location: location, offset: chunk.offset, length: chunk.size + 8, detail: detail, unknown: unknown))
            }
            let parseable = chunk.size <= Self.parseLimit
            switch classify(chunk.id) {
            case .structure:
                let payload = parseable && IFFChunkFields.ids.contains(chunk.id) ? try input.read(at: chunk.payloadOffset, count: Int(chunk.size)) : []
                if let fields = IFFChunkFields.trimmed(chunk.id, payload, order: form.order, aifc: form.formType == "AIFC") {
                    let slack = Int64(fields.count)
                    let item = found.add("\(namespace):\(name)-slack", .content, location: location, offset: chunk.payloadOffset + slack,
                                         length: chunk.size - slack, detail: "\(chunk.size - slack) bytes after the fields of the \(name) chunk",
                                         unknown: true)
                    found.inspect(item, payload: Array(payload[fields.count...]), origin: chunk.payloadOffset + slack)
                    contents.append(.trimmed(item: item, payload: fields))
                } else {
                    contents.append(.structure)
                }
            case .filler:
                if parseable, try input.read(at: chunk.payloadOffset, count: Int(chunk.size)).allSatisfy({ $0 == 0 }) {
                    contents.append(.drop)
                } else {
                    contents.append(add("\(namespace):\(name)", .embedded, "\(name) filler chunk holding non-zero bytes, \(chunk.size) bytes"))
                }
            case .list where chunk.size >= 4:
                let type = try input.read(at: chunk.payloadOffset, count: 4)
                let listType = String(decoding: type, as: UTF8.self)
                if listType == "INFO" && parseable {
                    let first = found.next
                    contents.append(.info(try info(input, chunk: chunk, options: options, into: &found.items)))
                    for i in first..<found.next { try inspectRange(i, input, &found) }
                } else {
                    let printable = type.allSatisfy { $0 >= 0x20 && $0 < 0x7F }
                    let label = printable ? listType.trimmingSuffixSpaces : "?"
                    contents.append(add("\(namespace):LIST/\(label)", listType == "adtl" ? .content : NameClassifier.category(of: label, otherwise: .content),
                                        "LIST '\(label)', \(chunk.size) bytes", unknown: listType != "adtl" && listType != "INFO"))
                    if parseable, case .item(let i) = contents.last { found.inspect(i, payload: try input.read(at: chunk.payloadOffset, count: Int(chunk.size)), origin: chunk.payloadOffset) }
                }
            case .xmp where parseable:
                let packet = try input.read(at: chunk.payloadOffset, count: Int(chunk.size))
                let keys = found.xmp(packet, location: "\(location)/XMP", origin: chunk.payloadOffset)
                contents.append(.xmp(packet: packet, keys: keys))
            case .id3 where parseable && chunk.size >= 10:
                if try ID3Tag.size(input, at: chunk.payloadOffset) != nil {
                    var tag = try ID3Tag.parse(input, at: chunk.payloadOffset, end: chunk.payload.upperBound, format: format, path: "\(location) chunk")
                    tag.itemise(location: location, options: options, into: &found.items)
                    contents.append(.id3(tag))
                } else {
                    contents.append(add("\(namespace):\(name)", .content, "\(name) chunk without a readable ID3v2 header", unknown: true))
                }
            case .item(let key, let category, let detail, let unknown):
                contents.append(add(key, category, "\(detail), \(chunk.size) bytes", unknown: unknown))
                // Kept whole (iXML, bext, axml, cart…): what the chunk holds decides with it (a LOCATION_GPS in iXML).
                if parseable, case .item(let i) = contents.last { found.inspect(i, payload: try input.read(at: chunk.payloadOffset, count: Int(chunk.size)), origin: chunk.payloadOffset) }
            case .list, .xmp, .id3:
                contents.append(add("\(namespace):\(name)", .content, "\(name) chunk too large to parse, \(chunk.size) bytes", unknown: true))
            }
        }
        var layout = IFFLayout(form: form, contents: contents)
        if let trailer = form.trailer {
            layout.trailerItem = try found.trailer("\(namespace):trailer", trailer, in: input, location: "after the \(form.formType) form", after: "the form")
            // An ID3 tag appended after the form (some taggers do this): its frames are items inside the trailer.
            if trailer.count <= Int(ID3Tag.maxTagSize), try ID3Tag.size(input, at: trailer.lowerBound) != nil,
               var tag = try? ID3Tag.parse(input, at: trailer.lowerBound, end: trailer.upperBound, format: format, path: "trailing ID3 tag") {
                let parent = found.next - 1
                let first = found.next
                tag.itemise(location: "trailing ID3v2", options: options, into: &found.items)
                for i in first..<found.next { found.items[i].parent = parent }
            }
        }
        return found.result(layout)
    }

    private func info(_ input: any ByteSource, chunk: IFFForm.Chunk, options: ScanOptions,
                      into items: inout [MetadataItem]) throws -> [(range: Range<Int64>, item: Int)] {
        let data = try input.read(at: chunk.payloadOffset, count: Int(chunk.size))
        var entries: [(range: Range<Int64>, item: Int)] = []
        var at = 4
        while at + 8 <= data.count {
            let id = String(decoding: data[at..<at + 4], as: UTF8.self)
            let size = Int(ByteOrder.little.u32(data, at + 4))
            guard size <= data.count - at - 8 else {
                throw MetascrubError.malformed(format: format, path: "LIST/INFO/\(id)", offset: chunk.payloadOffset + Int64(at), reason: "subchunk runs past its list")
            }
            let printable = data[at..<at + 4].allSatisfy { $0 >= 0x20 && $0 < 0x7F }
            let name = printable ? id.trimmingSuffixSpaces : "?"
            var value: String?
            if options.includeValues {
                value = String(ID3Frames.latin1(data[(at + 8)..<(at + 8 + size)]).replacingNulls.prefix(200))
            }
            let kind = RIFFInfo.classify(id, name: name)
            items.append(MetadataItem(key: "\(namespace):INFO/\(name)", category: kind.category,
                                      location: "LIST/INFO/\(name)", offset: chunk.payloadOffset + Int64(at), length: Int64(size) + 8,
                                      value: value, detail: "RIFF INFO text", isUnknown: kind.unknown))
            let end = min(at + 8 + size + (size & 1), data.count)
            entries.append((chunk.payloadOffset + Int64(at)..<chunk.payloadOffset + Int64(end), items.count - 1))
            at = end
        }
        return entries
    }

    func clean(_ input: any ByteSource, scan: ScanResult<IFFLayout>, plan: CleanPlan, to output: any OutputSink) throws -> CleanResult {
        let layout = scan.layout
        let form = layout.form
        // A copied chunk carries why its payload may stay; its 8-byte header is structure.
        enum Piece { case chunk(IFFForm.Chunk, LedgerReason), bytes([UInt8]) }
        var pieces: [Piece] = []
        for (chunk, content) in zip(form.chunks, layout.contents) {
            switch content {
            case .structure: pieces.append(.chunk(chunk, .codedData))
            // Kept with its slack, it is compared whole by the content check; trimmed, it is written from its fields.
            case .trimmed(let item, let payload):
                pieces.append(plan.keeps(item) ? .chunk(chunk, .codedData) : .bytes(form.chunkBytes(chunk.id, payload)))
            case .drop: continue
            case .item(let item): if plan.keeps(item) { pieces.append(.chunk(chunk, .keptItem(item))) }
            case .info(let entries):
                let kept = entries.filter { plan.keeps($0.item) }
                if kept.count == entries.count && !entries.isEmpty {
                    pieces.append(.chunk(chunk, .structure))
                } else if !kept.isEmpty {
                    var payload = Array("INFO".utf8)
                    for entry in kept { payload += try input.read(at: entry.range.lowerBound, count: entry.range.count) }
                    pieces.append(.bytes(form.chunkBytes("LIST", payload)))
                }
            case .xmp(let packet, let keys):
                guard let rebuilt = try XMPItems.rebuild(packet: packet, keys: keys, keeps: plan.keeps) else { continue }
                pieces.append(rebuilt == packet ? .chunk(chunk, .structure) : .bytes(form.chunkBytes(chunk.id, rebuilt)))
            case .id3(let tag):
                switch tag.rebuild(keeps: plan.keeps) {
                case .unchanged: pieces.append(.chunk(chunk, .structure))
                case .drop: continue
                case .replace(let bytes): pieces.append(.bytes(form.chunkBytes(chunk.id, bytes)))
                }
            }
        }
        var bodySize: Int64 = 0
        for piece in pieces {
            switch piece {
            case .chunk(let c, _): bodySize += Int64(c.range.count)
            case .bytes(let b): bodySize += Int64(b.count)
            }
        }
        let formSize = bodySize + 4
        var out = OutputPlan()
        switch form.kind {
        case .riff, .form:
            guard formSize <= 0xFFFF_FFFF else {
                throw MetascrubError.limitExceeded(format: format, path: "form", offset: 0, limit: "4 GiB")
            }
            out.append(Array((form.kind == .riff ? "RIFF" : "FORM").utf8) + form.order.bytes(UInt32(formSize)) + Array(form.formType.utf8))
        case .rf64:
            out.copy(offset: 0, count: 4, because: .structure)
            out.append([0xFF, 0xFF, 0xFF, 0xFF] + Array(form.formType.utf8))
        }
        for piece in pieces {
            switch piece {
            case .chunk(let c, _) where form.kind == .rf64 && c.id == "ds64":
                // ds64 holds the 64-bit RIFF size: the only value of it that changes.
                var payload = try input.read(at: c.payloadOffset, count: Int(c.size))
                for i in 0..<8 { payload[i] = UInt8((UInt64(formSize) >> (8 * UInt64(i))) & 0xFF) }
                out.append(form.chunkBytes("ds64", payload))
            case .chunk(let c, let reason):
                out.copy(offset: c.offset, count: 8, because: .structure)
                out.copy(offset: c.payloadOffset, count: c.size, because: reason)
                // The pad byte of an odd-sized chunk is written as zero, whatever the source held there.
                if c.size & 1 == 1 && !c.cut { out.append([0], because: .padding) }
            case .bytes(let b): out.append(b)
            }
        }
        if let trailer = form.trailer, let item = layout.trailerItem, plan.keeps(item) { out.copy(trailer, because: .keptItem(item)) }
        return CleanResult(method: .remux, ledger: try out.write(from: input, to: output))
    }

    func verifyContent(original: any ByteSource, _ before: IFFLayout, cleaned: any ByteSource, _ after: IFFLayout, result: CleanResult) throws -> ContentCheck {
        let method = "format, sample data and every structural chunk byte-identical"
        // A trimmed chunk is compared by its fields (what it was written with when its slack went).
        func structure(_ l: IFFLayout) -> [(chunk: IFFForm.Chunk, fields: [UInt8]?)] {
            zip(l.form.chunks, l.contents).compactMap {
                switch $0.1 {
                case .structure: return ($0.0, nil)
                case .trimmed(_, let payload): return ($0.0, payload)
                default: return nil
                }
            }
        }
        let x = structure(before), y = structure(after).map(\.chunk)
        guard before.form.formType == after.form.formType, x.map(\.chunk.id) == y.map(\.id) else {
            return ContentCheck(method: method, passed: false, detail: "structural chunk sequence changed")
        }
        var identical = IdenticalRanges()
        for ((p, fields), q) in zip(x, y) {
            if let fields, q.size == Int64(fields.count) {
                if try cleaned.read(at: q.payloadOffset, count: fields.count) == fields { continue }
            }
            // ds64's first 8 bytes are the RIFF size, which changes with the removed chunks.
            let skip: Int64 = p.id == "ds64" && before.form.kind == .rf64 ? 8 : 0
            guard p.size == q.size,
                  try ByteComparison.equal(original, p.payloadOffset + skip..<p.payload.upperBound, cleaned,
                                           q.payloadOffset + skip..<q.payload.upperBound, skipping: [], proving: &identical) else {
                return ContentCheck(method: method, passed: false, detail: "\(p.id) chunk at \(p.offset) differs")
            }
        }
        return ContentCheck(method: method, passed: true, identical: identical)
    }
}

/// WAV and AIFF differ only in their chunk tables (`WAVFormat.audio`, `AIFFFormat.audio`): the engine is the handler.
extension IFFAudio: FormatHandler {}
