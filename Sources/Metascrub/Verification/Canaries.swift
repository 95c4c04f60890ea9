// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubFormats

/// The byte patterns the residue proof looks for in a cleaned file: what each removed item held, in forms that
/// can be recognised as bytes. Taken from the ORIGINAL file: an item's own byte range where the scanner gave one
/// that is its alone, its value otherwise (an XMP property, whose range is its packet's).
struct Canary {
    var bytes: [UInt8]
    /// The removed item (index in the scan) it came from: the report names its key, never these bytes.
    var item: Int
}

/// Which parts of a scan the proof treats how.
struct ItemRoles {
    let items: [MetadataItem]
    let findings: [Finding]
    /// Items by offset, to tell a range that is an item's own from one it shares.
    private let atOffset: [Int64: [Int]]
    /// Items with a removed item somewhere below them.
    private let holdersOfRemoved: Set<Int>

    init(items: [MetadataItem], findings: [Finding]) {
        self.items = items
        self.findings = findings
        var atOffset: [Int64: [Int]] = [:]
        for (index, item) in items.enumerated() { if let offset = item.offset { atOffset[offset, default: []].append(index) } }
        self.atOffset = atOffset
        var holders = Set<Int>()
        for index in items.indices where index < findings.count && !findings[index].disposition.survives {
            var at = index
            // Bounded: a parent cycle in a hostile scan cannot loop.
            for _ in 0..<items.count {
                guard let parent = items[at].parent, items.indices.contains(parent),
                      holders.insert(parent).inserted else { break }
                at = parent
            }
        }
        self.holdersOfRemoved = holders
    }

    /// The item's range belongs to it alone, so its bytes are its value (EXIF entries, IPTC datasets, blocks).
    /// Items that share an offset with others (XMP properties at their packet's start, maker-note entries at the
    /// maker note's) only have a value; the block they share is precise for the one that holds the others.
    func precise(_ index: Int) -> Range<Int64>? {
        let item = items[index]
        guard let offset = item.offset, let length = item.length, length > 0, offset >= 0 else { return nil }
        for j in atOffset[offset] ?? [] where j != index && items[j].parent != index { return nil }
        return offset..<offset + length
    }

    /// Removed (or baked): an embedded file kept and cleaned inside (`clean`) is not, its removed items are.
    func removed(_ index: Int) -> Bool { !findings[index].disposition.survives }

    /// A removed item some block above it survives: the block is written again without it, so the item's bytes
    /// must not be found inside the block either.
    func insideSurvivor(_ index: Int) -> Bool {
        var at = index
        var steps = 0
        while let parent = items[at].parent, items.indices.contains(parent), steps < items.count {
            if !removed(parent) { return true }
            at = parent
            steps += 1
        }
        return false
    }

    /// Whether an item holds a removed item anywhere below it.
    func holdsRemoved(_ index: Int) -> Bool { holdersOfRemoved.contains(index) }

    /// A kept item whose bytes may hold removed values without that being a leak: kept by the policy, or a single
    /// value a handler keeps with a reason (a raw's make and model, an orientation it cannot bake). Kept-with-a-
    /// reason blocks (a PSD smart object's file, per-layer metadata, a primary image) are not: whatever a removed
    /// item held is searched inside them too.
    func exempt(_ index: Int) -> Bool {
        let f = findings[index]
        guard f.disposition == .keep else { return false }
        return f.reason == nil || f.item.category != .embedded
    }
}

enum CanaryExtractor {
    static let shortest = 6
    static let longest = 48
    /// Bytes of one item's range that are looked at (an embedded file's own metadata sits at its start).
    static let perItem = 1 << 16
    /// Of an embedded file (a thumbnail, a preview) only its start, where its own metadata sits: the rest is
    /// image data, whose printable runs mean nothing.
    static let perEmbedded = 1 << 13
    static let mostCanaries = 4096
    /// Key families whose items' ranges are exactly their value's bytes.
    static let ownBytesFamilies = ["exif:", "iptc:"]

    /// Strings every file of a kind carries: never evidence of a leak, and searching them is only cost.
    static let common: Set<String> = ["x-default", "W5M0MpCehiHzreSzNTczkc9d", "adobe:ns:meta/", "UNICODE", "ASCII"]

    /// Canaries of every removed item, less those that occur in what is kept (a kept item's bytes or value).
    static func canaries(_ roles: ItemRoles, original: any ByteSource) throws -> [Canary] {
        var out: [Canary] = []
        var seen = Set<[UInt8]>()
        for index in roles.items.indices where roles.removed(index) {
            let item = roles.items[index]
            // A removed block's bytes hold its entries: they are its canaries.
            if let parent = item.parent, roles.items.indices.contains(parent), roles.removed(parent), roles.precise(parent) != nil { continue }
            for bytes in try forms(of: index, roles, original) where seen.insert(bytes).inserted {
                out.append(Canary(bytes: bytes, item: index))
                if out.count >= mostCanaries { break }
            }
        }
        guard !out.isEmpty else { return [] }
        let search = PatternSearch(out.map(\.bytes))
        var excluded = Set<Int>()
        for index in roles.items.indices where roles.exempt(index) {
            for hit in search.hits(in: try source(of: index, roles, original, wholeBlock: true).bytes) { excluded.insert(hit.pattern) }
        }
        return out.enumerated().filter { !excluded.contains($0.offset) }.map(\.element)
    }

    /// What an item's canaries come from: its own range's bytes (`range` set), or its value's text.
    struct Source {
        var bytes: [UInt8]
        var range: Range<Int64>?
    }

    /// The bytes or value text an item's canaries come from (empty when it has neither).
    static func source(of index: Int, _ roles: ItemRoles, _ original: any ByteSource, wholeBlock: Bool = false) throws -> Source {
        let value = roles.items[index].value.map { Array($0.utf8) }
        // A kept item with removed items inside is not evidence for them: neither its bytes nor its value (a kept
        // XMP structure's rendering holds the address fields removed from it).
        if wholeBlock, roles.holdsRemoved(index) { return Source(bytes: []) }
        if let range = roles.precise(index), range.upperBound <= original.size {
            let cap = !wholeBlock && roles.items[index].category == .embedded ? perEmbedded : perItem
            let bytes = try original.read(at: range.lowerBound, count: Int(min(Int64(cap), Int64(range.count))))
            // A range that holds the value verbatim and much more (an MP4 `hdlr` box around its name, a sample
            // entry around its compressor name) also holds structure the cleaner writes again: the value alone is
            // the canary then. So it is when the range is far larger than any rendering of one value. A range
            // little larger than its value (a NUL, an EXIF UserComment's charset) is the value's own bytes.
            // EXIF entries and IPTC datasets are given exactly (an EXIF UserComment's range is its charset and
            // text, rendered only as the charset): their bytes are the canaries.
            let key = roles.items[index].key
            if !wholeBlock, let value, !value.isEmpty, !ownBytesFamilies.contains(where: { key.hasPrefix($0) }),
               (range.count > Int64(value.count) + 16 && contains(bytes, value)) || range.count > 256 {
                return Source(bytes: value)
            }
            return Source(bytes: bytes, range: range)
        }
        return Source(bytes: value ?? [])
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, needle.count <= haystack.count else { return false }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if haystack[start..<start + needle.count].elementsEqual(needle) { return true }
        }
        return false
    }

    static func forms(of index: Int, _ roles: ItemRoles, _ original: any ByteSource) throws -> [[UInt8]] {
        let item = roles.items[index]
        let from = try source(of: index, roles, original)
        let raw = from.bytes
        var out: [[UInt8]] = []
        // Byte-wise, ASCII case folded: Foundation's `contains` on strings cost more than the search itself.
        let key = item.key.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
        func has(_ word: String) -> Bool { contains(key, Array(word.utf8)) }
        func ends(_ word: String) -> Bool { key.reversed().starts(with: word.utf8.reversed()) }
        // GPS coordinates: the EXIF rationals as stored, and decimal degrees as text.
        if ends("gpslatitude") || ends("gpslongitude") {
            if from.range != nil, raw.count == 24, raw.contains(where: { $0 != 0 }) { out.append(raw) }
            if let value = item.value { out += decimalDegrees(value).map { Array($0.utf8) } }
        }
        // A binary UUID (16 bytes) is as identifying as any serial.
        if has("uuid"), from.range != nil, raw.count == 16, Set(raw).count > 4 { out.append(raw) }
        let serial = has("serial") || has("uuid") || ends("uniqueid")
        // Image data inside an embedded file is full of short printable runs that mean nothing: longer ones only.
        let minimum = from.range != nil && item.category == .embedded ? 10 : shortest
        // An embedded JPEG's tables and headers are every encoder's (`JPEGCanarySource`): its segments' text and
        // a stretch of its scan data identify it instead.
        let jpeg = from.range != nil && item.category == .embedded ? JPEGCanarySource.parts(raw) : nil
        if let entropy = jpeg?.entropy { out.append(entropy) }
        for run in textRuns(jpeg?.text ?? raw, minimum: minimum)
        where accepts(run, category: item.category, serial: serial) {
            out.append(Array(run.prefix(longest)))
        }
        return out
    }

    /// Bytes that may be part of a text run: printable ASCII but the markup XML or a rendered value puts
    /// between values (`"<>&;=`).
    private static let texty: [Bool] = (0..<256).map { byte in
        byte >= 0x20 && byte < 0x7F && ![0x22, 0x3C, 0x3E, 0x26, 0x3B, 0x3D].contains(byte)
    }

    /// Maximal runs of texty bytes at least `minimum` long, trimmed of spaces.
    static func textRuns(_ bytes: [UInt8], minimum: Int = shortest) -> [[UInt8]] {
        var runs: [[UInt8]] = []
        bytes.withUnsafeBufferPointer { b in
            texty.withUnsafeBufferPointer { texty in
                var i = 0
                let n = b.count
                while i < n {
                    guard texty[Int(b[i])] else { i += 1; continue }
                    var start = i
                    while i < n, texty[Int(b[i])] { i += 1 }
                    var end = i
                    while start < end, b[start] == 0x20 { start += 1 }
                    while end > start, b[end - 1] == 0x20 { end -= 1 }
                    if end - start >= minimum { runs.append(Array(b[start..<end])) }
                }
            }
        }
        return runs
    }

    /// Six characters or more that are not only digits and punctuation; coordinates (4+ decimals) under
    /// `location` and serial numbers (6+ digits) are the exceptions. Never a string every file carries.
    static func accepts(_ run: [UInt8], category: MetascrubCore.Category, serial: Bool) -> Bool {
        if run.count <= 24, common.contains(String(decoding: run, as: UTF8.self)) { return false }
        if run.starts(with: Array("http://".utf8)) {
            for namespace in namespaceHosts where run.dropFirst(7).starts(with: namespace) { return false }
        }
        if run.contains(where: { ($0 | 0x20) >= 0x61 && ($0 | 0x20) <= 0x7A }) { return true }
        if serial { return run.filter { $0 >= 0x30 && $0 <= 0x39 }.count >= 6 }
        guard category == .location else { return false }
        // A coordinate: a digit, a point, four digits.
        var digitsAfterPoint = -1
        for (i, byte) in run.enumerated() {
            let digit = byte >= 0x30 && byte <= 0x39
            if byte == 0x2E, i > 0, run[i - 1] >= 0x30, run[i - 1] <= 0x39 { digitsAfterPoint = 0 }
            else if digit, digitsAfterPoint >= 0 { digitsAfterPoint += 1; if digitsAfterPoint >= 4 { return true } }
            else { digitsAfterPoint = -1 }
        }
        return false
    }

    /// Hosts of the XML namespace URIs every XMP packet names.
    static let namespaceHosts = ["ns.", "www.w3.org", "purl.org"].map { Array($0.utf8) }

    /// `48/1 51/1 756/25` (degrees, minutes, seconds as rationals) as decimal degrees with four decimals, rounded
    /// and cut (`48.8584`): the form text tracks and sidecars write. Zero or whole degrees are no canary.
    static func decimalDegrees(_ value: String) -> [String] {
        let parts = value.split(separator: " ").compactMap { part -> Double? in
            let fraction = part.split(separator: "/")
            guard fraction.count == 2, let n = Double(fraction[0]), let d = Double(fraction[1]), d != 0 else { return nil }
            return n / d
        }
        guard parts.count == 3 else { return [] }
        let degrees = parts[0] + parts[1] / 60 + parts[2] / 3600
        guard degrees > 0.01, degrees <= 180 else { return [] }
        func fourDecimals(_ tenThousandths: Int) -> String {
            let fraction = String(tenThousandths % 10000)
            return "\(tenThousandths / 10000)." + String(repeating: "0", count: 4 - fraction.count) + fraction
        }
        let rounded = fourDecimals(Int((degrees * 10000).rounded()))
        let cut = fourDecimals(Int((degrees * 10000).rounded(.down)))
        return Set([rounded, cut]).filter { !$0.hasSuffix(".0000") }.sorted()
    }
}
