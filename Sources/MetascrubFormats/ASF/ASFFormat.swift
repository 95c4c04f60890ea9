// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// What the ASF scanner learned: per item the byte ranges to overwrite, and the ranges a decoder needs.
public struct ASFLayout: Sendable {
    enum Action {
        /// Turn the object into a zero-filled Padding Object of the same size.
        case padding(Range<Int64>)
        /// Zero a field in place (a string's characters, a descriptor's value).
        case zero(Range<Int64>)
        /// Set the creation date at this offset to the Unix epoch: what muxers write when they have no date.
        case epoch(Int64)
    }

    var actions: [Int: [Action]] = [:]
    var groups: [(range: Range<Int64>, items: [Int])] = []
    var core: [Range<Int64>] = []
}

/// ASF (WMV/WMA): metadata objects are overwritten in place by Padding Objects of the same size, and strings
/// inside objects that stay are zeroed, so the header keeps its size and object count and the Data Object
/// (every packet) and the indexes are copied unchanged. The File ID GUID is kept: the Data Object and the
/// indexes repeat it, and it is random per file rather than personal.
public struct ASFFormat: FormatHandler {
    public init() {}

    static let format = "ASF"
    /// 1970-01-01 as a FILETIME (100 ns since 1601), little-endian: the "no date" value ffmpeg writes.
    static let unixEpoch: [UInt8] = [0x00, 0x80, 0x3E, 0xD5, 0xDE, 0xB1, 0x9D, 0x01]

    /// GUID text (as in the ASF specification) to the bytes a file stores (first three fields little-endian).
    static func guid(_ text: String) -> [UInt8] {
        let hex = Array(text.filter { $0 != "-" })
        var b: [UInt8] = []
        var i = 0
        while i + 1 < hex.count {
            b.append(UInt8(String(hex[i...i + 1]), radix: 16) ?? 0)
            i += 2
        }
        guard b.count == 16 else { return b }
        return [b[3], b[2], b[1], b[0], b[5], b[4], b[7], b[6]] + b[8...]
    }

    enum G {
        static let header = guid("75B22630-668E-11CF-A6D9-00AA0062CE6C")
        static let data = guid("75B22636-668E-11CF-A6D9-00AA0062CE6C")
        static let fileProperties = guid("8CABDCA1-A947-11CF-8EE4-00C00C205365")
        static let contentDescription = guid("75B22633-668E-11CF-A6D9-00AA0062CE6C")
        static let extendedContentDescription = guid("D2D0A440-E307-11D2-97F0-00A0C95EA850")
        static let headerExtension = guid("5FBF03B5-A92E-11CF-8EE3-00C00C205365")
        static let metadata = guid("C5F8CBEA-5BAF-4877-8467-AA8C44FA4CCA")
        static let metadataLibrary = guid("44231C94-9498-49D1-A141-1D134E457054")
        static let padding = guid("1806D474-CADF-4509-A4BA-9AABCB96AAE8")
        static let codecList = guid("86D15240-311D-11D0-A3A4-00A0C90348F6")
        static let contentBranding = guid("2211B3FA-BD23-11D2-B4B7-00A0C955FC6E")
        static let scriptCommand = guid("1EFB1A30-0B62-11D0-A39B-00A0C90348F6")
        static let marker = guid("F487CD01-A951-11CF-8EE6-00C00C205365")
    }

    /// Objects a player needs (header, header extension and top level), kept byte for byte.
    static let structural: [[UInt8]] = [
        "B7DC0791-A9B7-11CF-8EE6-00C00C205365",  // Stream Properties
        "7BF875CE-468D-11D1-8D82-006097C9A2B2",  // Stream Bitrate Properties
        "75B22635-668E-11CF-A6D9-00AA0062CE6C",  // Error Correction
        "D6E229DC-35DA-11D1-9034-00A0C90349BE",  // Bitrate Mutual Exclusion
        "2211B3FB-BD23-11D2-B4B7-00A0C955FC6E",  // Content Encryption
        "298AE614-2622-4C17-B935-DAE07EE9289C",  // Extended Content Encryption
        "2211B3FC-BD23-11D2-B4B7-00A0C955FC6E",  // Digital Signature
        "14E6A5CB-C672-4332-8399-A96952065B5A",  // Extended Stream Properties
        "7C4346A9-EFE0-4BFC-B229-393EDE415C85",  // Language List
        "A08649CF-4775-4670-8A16-6E35357566CD",  // Advanced Mutual Exclusion
        "D1465A40-5A79-4338-B71B-E36B8FD6C249",  // Group Mutual Exclusion
        "D4FED15B-88D3-454F-81F0-ED5C45999E24",  // Stream Prioritization
        "A69609E6-517B-11D2-B6AF-00C04FD908E9",  // Bandwidth Sharing
        "D6E229DF-35DA-11D1-9034-00A0C90349BE",  // Index Parameters
        "6B203BAD-3F11-48E4-ACA8-D7613DE2CFA7",  // Media Object Index Parameters
        "F55E496D-9797-4B5D-8C8B-604DFE9BFB24",  // Timecode Index Parameters
        "26F18B5D-4584-47EC-9F5F-0E651F0452C9",  // Compatibility
        "43058533-6981-49E6-9B74-AD12CB86D58C",  // Advanced Content Encryption
        "33000890-E5B1-11CF-89F4-00A0C90349CB",  // Simple Index
        "D6E229D3-35DA-11D1-9034-00A0C90349BE",  // Index
        "FEB103F8-12AD-4C64-840F-2A1D2F7AD48C",  // Media Object Index
        "3CB73FD0-0C4A-4803-953D-EDF7B6228F0C",  // Timecode Index
    ].map(guid)

    public func scan(_ input: any ByteSource, options: ScanOptions) throws -> ScanResult<ASFLayout> {
        try Scanner.scan(input, options: options)
    }

    struct Object {
        var guid: [UInt8]
        var offset: Int64
        var size: Int64
        var range: Range<Int64> { offset..<offset + size }
        var body: Int64 { offset + 24 }
    }

    struct Scanner: LayoutScanner {
        let input: any ByteSource
        var found: ItemCollector
        var layout = ASFLayout()

        init(input: any ByteSource, options: ScanOptions) {
            self.input = input
            found = ItemCollector(options)
        }

        mutating func add(_ key: String, _ category: Category, _ range: Range<Int64>, location: String, detail: String, value: String? = nil,
                          unknown: Bool = false, action: ASFLayout.Action) -> Int {
            let item = found.add(key, category, range, location: location, value: value, detail: detail, unknown: unknown)
            layout.actions[item] = [action]
            // Descriptions, attributes, markers and script commands are kept or dropped whole: a position written
            // in their (UTF-16) text decides them.
            if ![.location, .embedded, .time].contains(category), range.count <= ContentInspector.limit,
               let payload = try? input.read(at: range.lowerBound, count: Int(range.count)) {
                found.inspect(item, payload: payload, origin: range.lowerBound)
            }
            return item
        }

        /// `cutData`: a Data Object cut by the end of the file (a damaged file) is kept up to the end.
        func objects(from start: Int64, to end: Int64, path: String, max: Int = 1 << 16, cutData: Bool = false) throws -> [Object] {
            var out: [Object] = []
            var at = start
            while at < end {
                guard out.count < max else { throw MetascrubError.limitExceeded(format: format, path: path, offset: at, limit: "\(max) objects") }
                let head = try input.read(at: at, count: 24, format: format, path: path)
                var size = Int64(0)
                for i in stride(from: 23, through: 16, by: -1) { size = size << 8 | Int64(head[i]) }
                guard size >= 24, size <= end - at else {
                    if cutData, size >= 24, end == input.size, end - at >= 50, Array(head[0..<16]) == G.data {
                        out.append(Object(guid: G.data, offset: at, size: end - at))
                        return out
                    }
                    if at + size > end && end == input.size {
                        throw MetascrubError.truncated(format: format, path: path, offset: at, needed: size > 0 && size < Int64.max / 2 ? at + size - end : 24)
                    }
                    throw MetascrubError.malformed(format: format, path: path, offset: at, reason: "object size \(size) does not fit its parent")
                }
                out.append(Object(guid: Array(head[0..<16]), offset: at, size: size))
                at += size
            }
            return out
        }

        mutating func run() throws {
            let size = input.size
            let head = try input.read(at: 0, count: 30, format: format, path: "Header Object")
            guard Array(head[0..<16]) == G.header else {
                throw MetascrubError.malformed(format: format, path: "Header Object", offset: 0, reason: "not an ASF header")
            }
            var headerSize = Int64(0)
            for i in stride(from: 23, through: 16, by: -1) { headerSize = headerSize << 8 | Int64(head[i]) }
            guard headerSize >= 30 else { throw MetascrubError.malformed(format: format, path: "Header Object", offset: 16, reason: "header size too small") }
            guard headerSize <= size else { throw MetascrubError.truncated(format: format, path: "Header Object", offset: 16, needed: headerSize - size) }
            for o in try objects(from: 30, to: headerSize, path: "Header") { try headerObject(o, path: "Header") }
            // Top level: the Data Object and the indexes.
            var sawData = false
            let top = try objects(from: headerSize, to: size, path: "top level", cutData: found.options.tolerateDamage)
            if let last = top.last, last.guid == G.data, try declaredSize(last.offset) > last.size {
                let declared = try declaredSize(last.offset)
                try found.damaged(.truncated(format: format, path: "top level", offset: last.offset, needed: declared - last.size), at: last.offset,
                                  "the file ends inside the Data Object at \(last.offset) (\(declared - last.size) bytes missing); the part that is there is copied byte for byte at the same offsets and compared")
            }
            for o in top {
                if o.guid == G.data || structural.contains(o.guid) {
                    sawData = sawData || o.guid == G.data
                    layout.core.append(o.range)
                } else {
                    try headerObject(o, path: "top level")
                }
            }
            if !sawData {
                // The header, where all metadata sits, was read whole: a stub or an upload cut right after it.
                try found.damaged(.malformed(format: format, path: "Data Object", offset: headerSize, reason: "no Data Object"), at: headerSize,
                                  "no Data Object after the header at \(headerSize): the file holds no media data to compare")
            }
        }

        func declaredSize(_ offset: Int64) throws -> Int64 {
            let head = try input.read(at: offset + 16, count: 8, format: format, path: "object size")
            return head.reversed().reduce(Int64(0)) { $0 << 8 | Int64($1) }
        }

        mutating func headerObject(_ o: Object, path: String) throws {
            let loc = path
            switch o.guid {
            case G.fileProperties:
                guard o.size >= 104 else { throw MetascrubError.malformed(format: format, path: "File Properties", offset: o.offset, reason: "object too small") }
                let date = o.body + 24
                let value = try input.read(at: date, count: 8)
                if value.contains(where: { $0 != 0 }) && value != ASFFormat.unixEpoch {
                    _ = add("asf:FileProperties/CreationDate", .time, date..<date + 8, location: "\(loc)/FileProperties/CreationDate",
                            detail: "file creation date", action: .epoch(date))
                }
                layout.core.append(o.offset..<date)
                layout.core.append(date + 8..<o.range.upperBound)
            case G.contentDescription:
                guard o.size >= 34 else { throw MetascrubError.malformed(format: format, path: "Content Description", offset: o.offset, reason: "object too small") }
                let lengths = try input.read(at: o.body, count: 10)
                let names: [(String, Category)] = [("Title", .content), ("Author", .identity), ("Copyright", .identity), ("Description", .content), ("Rating", .content)]
                var at = o.body + 10
                var mine: [Int] = []
                for (k, (name, category)) in names.enumerated() {
                    let n = Int64(ByteOrder.little.u16(lengths, 2 * k))
                    guard at + n <= o.range.upperBound else {
                        throw MetascrubError.malformed(format: format, path: "Content Description/\(name)", offset: at, reason: "string past the object")
                    }
                    let text = try input.read(at: at, count: Int(min(n, 4096)))
                    if text.contains(where: { $0 != 0 }) {
                        mine.append(add("asf:ContentDescription/\(name)", category, at..<at + n, location: "\(loc)/ContentDescription/\(name)",
                                        detail: "\(name), \(n) bytes", value: ValueText.utf16le(text[...]), action: .zero(at..<at + n)))
                    }
                    at += n
                }
                layout.groups.append((o.range, mine))
            case G.extendedContentDescription:
                try extended(o, location: "\(loc)/ExtendedContentDescription")
            case G.headerExtension:
                guard o.size >= 46 else { throw MetascrubError.malformed(format: format, path: "Header Extension", offset: o.offset, reason: "object too small") }
                layout.core.append(o.offset..<o.offset + 46)
                for inner in try objects(from: o.offset + 46, to: o.range.upperBound, path: "Header Extension") {
                    try headerObject(inner, path: "\(loc)/HeaderExtension")
                }
            case G.metadata, G.metadataLibrary:
                let name = o.guid == G.metadata ? "Metadata" : "MetadataLibrary"
                let count = ByteOrder.little.u16(try input.read(at: o.body, count: 2, format: format, path: name), 0)
                _ = add("asf:\(name)", .content, o.range, location: "\(loc)/\(name)", detail: "\(count) attribute records, \(o.size) bytes",
                        action: .padding(o.range))
            case G.codecList:
                _ = add("asf:CodecList", .software, o.range, location: "\(loc)/CodecList", detail: "codec names and descriptions (informational)",
                        action: .padding(o.range))
            case G.contentBranding:
                _ = add("asf:ContentBranding", .embedded, o.range, location: "\(loc)/ContentBranding", detail: "banner image and URLs, \(o.size) bytes",
                        action: .padding(o.range))
            case G.scriptCommand:
                _ = add("asf:ScriptCommand", .content, o.range, location: "\(loc)/ScriptCommand", detail: "script commands (URLs, captions), \(o.size) bytes",
                        action: .padding(o.range))
            case G.marker:
                _ = add("asf:Marker", .content, o.range, location: "\(loc)/Marker", detail: "named markers, \(o.size) bytes", action: .padding(o.range))
            case G.padding:
                var at = o.body
                while at < o.range.upperBound {
                    let n = Int(min(o.range.upperBound - at, 1 << 20))
                    if try input.read(at: at, count: n).contains(where: { $0 != 0 }) {
                        _ = add("asf:Padding", .content, o.range, location: "\(loc)/Padding", detail: "padding holding \(o.size - 24) bytes of old data",
                                action: .zero(o.body..<o.range.upperBound))
                        break
                    }
                    at += Int64(n)
                }
            default:
                if structural.contains(o.guid) {
                    layout.core.append(o.range)
                } else {
                    _ = add("asf:object", .content, o.range, location: "\(loc)/unknown", detail: "unknown \(o.size)-byte object", unknown: true,
                            action: .padding(o.range))
                }
            }
        }

        mutating func extended(_ o: Object, location: String) throws {
            let body = try input.read(at: o.body, count: Int(min(o.size - 24, 16 << 20)), format: format, path: "Extended Content Description")
            guard body.count >= 2 else { throw MetascrubError.malformed(format: format, path: location, offset: o.body, reason: "object too small") }
            let count = Int(ByteOrder.little.u16(body, 0))
            var p = 2
            var mine: [Int] = []
            for _ in 0..<count {
                guard p + 2 <= body.count else { throw MetascrubError.malformed(format: format, path: location, offset: o.body + Int64(p), reason: "descriptor past the object") }
                let nameLength = Int(ByteOrder.little.u16(body, p))
                guard p + 2 + nameLength + 4 <= body.count else { throw MetascrubError.malformed(format: format, path: location, offset: o.body + Int64(p), reason: "descriptor past the object") }
                let rawName = ValueText.utf16le(body[(p + 2)..<(p + 2 + nameLength)])
                let type = ByteOrder.little.u16(body, p + 2 + nameLength)
                let valueLength = Int(ByteOrder.little.u16(body, p + 4 + nameLength))
                let v = p + 6 + nameLength
                guard v + valueLength <= body.count else { throw MetascrubError.malformed(format: format, path: location, offset: o.body + Int64(p), reason: "descriptor value past the object") }
                let name = rawName.filter { $0.isASCII && ($0.isLetter || $0.isNumber || "/_-.".contains($0)) }
                let lower = name.lowercased()
                let category: Category = lower.contains("picture") ? .embedded
                    : lower.contains("encod") || lower.contains("tool") || lower.contains("writer") ? .software
                    : NameClassifier.category(of: name, otherwise: .content)
                let range = o.body + Int64(v)..<o.body + Int64(v + valueLength)
                if body[v..<v + valueLength].contains(where: { $0 != 0 }) {
                    mine.append(add("asf:ExtendedContentDescription/\(name)", category, range, location: "\(location)/\(name)",
                                    detail: "\(name), \(valueLength) bytes", value: type == 0 ? ValueText.utf16le(body[v..<v + valueLength]) : nil,
                                    action: .zero(range)))
                }
                p = v + valueLength
            }
            layout.groups.append((o.range, mine))
        }
    }

    public func clean(_ input: any ByteSource, scan: ScanResult<ASFLayout>, plan: CleanPlan, to output: any OutputSink) throws -> CleanResult {
        let layout = scan.layout
        let removed = Set(scan.items.indices.filter { !plan.keeps($0) })
        var padding = SameOffset.Padding(groups: layout.groups, removed: removed)
        var epochs: [Int64] = []
        for i in removed.sorted() {
            for action in layout.actions[i] ?? [] {
                switch action {
                case .padding(let r): padding.pad(r)
                case .zero(let r): padding.zero(r)
                case .epoch(let at): epochs.append(at)
                }
            }
        }
        var patches = InPlacePatches()
        for at in epochs { patches.add(at, Self.unixEpoch) }
        for r in padding.padded {
            var size = [UInt8](repeating: 0, count: 8)
            var v = UInt64(r.count)
            for i in 0..<8 { size[i] = UInt8(v & 0xFF); v >>= 8 }
            patches.add(r.lowerBound, G.padding + size)
            patches.zero(r.lowerBound + 24..<r.upperBound)
        }
        for r in padding.zeroed where !r.isEmpty { patches.zero(r) }
        return try SameOffset.write(patches, format: Self.format, from: input, to: output, note: SameOffset.padded(
            "metadata objects were overwritten with Padding Objects of the same size; the Data Object and indexes are unchanged"))
    }

    public func verifyContent(original: any ByteSource, _ before: ASFLayout, cleaned: any ByteSource, _ after: ASFLayout, result: CleanResult) throws -> ContentCheck {
        let method = "file and stream properties, Data Object and indexes byte-identical at the same offsets"
        return try SameOffset.verify(original: original, cleaned: cleaned, core: before.core, sameLayout: before.core == after.core && !before.core.isEmpty,
                                     method: method, part: "object")
    }
}
