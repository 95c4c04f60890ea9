// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubNative

/// TIFF-structured camera raws (DNG, CR2, NEF/NRW, ARW/SR2, PEF, ORF, RW2), cleaned in place: nothing moves,
/// so every offset the raw converter follows (maker-note internals included) still holds. Removed entries
/// leave their IFD (rewritten where it is) and their values are zeroed; identifying maker-note fields and
/// metadata segments of embedded JPEG previews are overwritten with zeros of the same length. The output is
/// proven by LibRaw decoding the same sensor data and colour data from both files.
public struct RawTIFFFormat: FormatHandler {
    /// Where the TIFF structures are: the whole file, the boxes of a Canon CR3 (`CR3Scanner`), or the
    /// embedded JPEG of a Fujifilm RAF (`RAFScanner`). The in-place cleaning and the proof are the same.
    public enum Container: Sendable { case tiff, cr3, raf }
    let container: Container

    public init(_ container: Container = .tiff) { self.container = container }

    public func scan(_ input: any ByteSource, options: ScanOptions) throws -> ScanResult<RawTIFFLayout> {
        // A raw LibRaw does not even recognise is reported like any format without a cleaner (so
        // --allow-uncleaned can copy it), before its metadata is listed.
        let reason: String?
        if let fd = input.fileDescriptor {
            reason = LibRaw.unrecognised(path: "/proc/self/fd/\(fd)")
        } else {
            reason = LibRaw.unrecognised(bytes: try input.readAll())
        }
        if let reason {
            throw MetascrubError.unsupported(format: container == .cr3 ? "Canon CR3" : container == .raf ? "Fujifilm RAF" : "camera raw",
                                             reason: "LibRaw does not recognise this raw (\(reason)), so a cleaned copy could not be proven to decode the same")
        }
        switch container {
        case .tiff: return try RawTIFFScanner.scan(input, options: options)
        case .cr3: return try CR3Scanner.scan(input, options: options)
        case .raf: return try RAFScanner.scan(input, options: options)
        }
    }

    public func clean(_ input: any ByteSource, scan: ScanResult<RawTIFFLayout>, plan: CleanPlan, to output: any OutputSink) throws -> CleanResult {
        let layout = scan.layout
        // A raw LibRaw cannot decode could not be proven unchanged afterwards: refused before anything is written.
        do {
            _ = try Self.fingerprint(input)
        } catch {
            throw MetascrubError.unsupported(format: "camera raw", reason: "LibRaw cannot decode it (\(error)), so a cleaned copy could not be proven to decode the same")
        }
        var result = CleanResult(method: .remux)
        let patches = try RawTIFFPatcher.patches(layout, source: input, plan: plan, notes: &result.notes)
        try patches.plan(size: input.size, format: "camera raw").write(from: input, to: output)
        return result
    }

    public func verifyContent(original: any ByteSource, _ layout: RawTIFFLayout, cleaned: any ByteSource, _ after: RawTIFFLayout,
                              result: CleanResult) throws -> ContentCheck {
        let method = "LibRaw decodes identical sensor data and colour data; image data byte-identical at the same offsets"
        guard original.size == cleaned.size else {
            return ContentCheck(method: method, passed: false, detail: "the cleaned raw changed size")
        }
        let holes = layout.holes.sorted { $0.lowerBound < $1.lowerBound }
        for block in layout.imageData where try !ByteComparison.equal(original, block, cleaned, block, skipping: holes) {
            return ContentCheck(method: method, passed: false, detail: "image data at offset \(block.lowerBound) differs")
        }
        let before = try Self.fingerprint(original), after = try Self.fingerprint(cleaned)
        guard before.pixels == after.pixels else {
            return ContentCheck(method: method, passed: false, detail: "LibRaw decodes different sensor data")
        }
        guard before.colour == after.colour else {
            return ContentCheck(method: method, passed: false, detail: "LibRaw reads different colour data (black/white levels, multipliers or matrices)")
        }
        return ContentCheck(method: method, passed: true, detail: "\(before.width)x\(before.height) sensor data")
    }

    /// LibRaw opens a file by its descriptor's path, so a large raw is not copied into memory.
    static func fingerprint(_ source: any ByteSource) throws -> RawFingerprint {
        if let fd = source.fileDescriptor { return try LibRaw.fingerprint(path: "/proc/self/fd/\(fd)") }
        return try LibRaw.fingerprint(bytes: try source.readAll())
    }
}

/// The same-size replacements that clean a raw under a plan.
enum RawTIFFPatcher {
    static func patches(_ layout: RawTIFFLayout, source: any ByteSource, plan: CleanPlan, notes: inout [Note]) throws -> InPlacePatches {
        var drops: [Int64: Set<UInt16>] = [:]
        var orders: [Int64: ByteOrder] = [:]
        var zero: [Range<Int64>] = []
        var blank: [Range<Int64>] = []
        for (item, action) in layout.actions where !plan.keeps(item) {
            switch action {
            case .drop(let ifd, let tag, let ranges, let order):
                drops[ifd, default: []].insert(tag)
                if let order { orders[ifd] = order }
                zero += ranges
            case .blank(let range):
                blank.append(range)
            }
        }
        var patches = InPlacePatches()
        for block in layout.xmp {
            let rebuilt = try XMPItems.rebuild(packet: block.packet, keys: block.keys, keeps: plan.keeps)
            guard let ifd = block.ifd else {
                // A packet on its own: an empty packet (or spaces) in its place.
                if rebuilt != block.packet { patches.add(block.value.lowerBound, emptyXMP(filling: Int(block.value.count), with: rebuilt)) }
                continue
            }
            guard let rebuilt else {
                drops[ifd, default: []].insert(block.tag)
                if block.value.count > 4 { zero.append(block.value) }
                continue
            }
            if rebuilt == block.packet { continue }
            if rebuilt.count <= block.value.count {
                // XMP allows whitespace after the packet; the entry keeps its length.
                patches.add(block.value.lowerBound, rebuilt + [UInt8](repeating: 0x20, count: block.value.count - rebuilt.count))
            } else {
                notes.append(Note(.warning, code: "xmp-dropped", "the kept XMP properties do not fit in place; the whole packet is removed",
                                  offset: block.value.lowerBound))
                drops[ifd, default: []].insert(block.tag)
                zero.append(block.value)
            }
        }
        var tables: [Range<Int64>] = []
        for (ifd, tags) in drops {
            let table = try rewrittenTable(source, at: ifd, dropping: tags, order: orders[ifd] ?? layout.structure.order)
            patches.add(ifd, table)
            tables.append(ifd..<ifd + Int64(table.count))
        }
        // Zeroed values never touch a rewritten table, image data (outside its declared holes, such as the EXIF
        // of an embedded JPEG) or XMP written in place.
        let keep = tables + ByteSplice.subtract(layout.imageData, layout.holes) + patches.ranges
        for piece in ByteSplice.subtract(zero, keep) { patches.zero(piece) }
        for piece in ByteSplice.subtract(blank, tables + patches.ranges) { patches.zero(piece) }
        return patches
    }

    /// `length` bytes holding the kept packet, or an empty one, padded with spaces (XMP allows trailing
    /// whitespace); only spaces when not even an empty packet fits.
    static func emptyXMP(filling length: Int, with kept: [UInt8]?) -> [UInt8] {
        let empty = Array("<?xpacket begin=\"\u{FEFF}\" id=\"W5M0MpCehiHzreSzNTczkc9d\"?><x:xmpmeta xmlns:x=\"adobe:ns:meta/\"/><?xpacket end=\"w\"?>".utf8)
        for candidate in [kept, empty].compactMap({ $0 }) where candidate.count <= length {
            return candidate + [UInt8](repeating: 0x20, count: length - candidate.count)
        }
        return [UInt8](repeating: 0x20, count: length)
    }

    /// The IFD at `offset` without the entries of `tags`: same position and size, the freed tail zeroed.
    static func rewrittenTable(_ source: any ByteSource, at offset: Int64, dropping tags: Set<UInt16>, order: ByteOrder) throws -> [UInt8] {
        let count = Int(order.u16(try source.read(at: offset, count: 2), 0))
        let old = try source.read(at: offset, count: 2 + count * 12 + 4)
        var kept: [UInt8] = []
        var n = 0
        for i in 0..<count where !tags.contains(order.u16(old, 2 + i * 12)) {
            kept += old[2 + i * 12..<2 + i * 12 + 12]
            n += 1
        }
        let next = Array(old[2 + count * 12..<2 + count * 12 + 4])
        return order.bytes(UInt16(n)) + kept + next + [UInt8](repeating: 0, count: (count - n) * 12)
    }
}
