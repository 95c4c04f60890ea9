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
        // A raw LibRaw does not even recognise (a test stub, a cut file) is cleaned like damaged input when its
        // metadata structure parses: the in-place clean is proven byte by byte instead of by decoding. Under
        // `damaged: refuse` it is reported like any format without a cleaner (so --allow-uncleaned can copy it).
        let reason: String?
        if let fd = input.fileDescriptor {
            reason = LibRaw.unrecognised(path: "/proc/self/fd/\(fd)")
        } else {
            reason = LibRaw.unrecognised(bytes: try input.readAll())
        }
        if let reason, !options.tolerateDamage {
            throw MetascrubError.unsupported(format: formatName,
                                             reason: "LibRaw does not recognise this raw (\(reason)), so a cleaned copy could not be proven to decode the same")
        }
        var result: ScanResult<RawTIFFLayout>
        switch container {
        case .tiff: result = try RawTIFFScanner.scan(input, options: options)
        case .cr3: result = try CR3Scanner.scan(input, options: options)
        case .raf: result = try RAFScanner.scan(input, options: options)
        }
        if let reason {
            result.layout.undecodable = reason
            result.notes.append(Self.undecodableNote("LibRaw does not recognise this raw (\(reason))", result.layout))
        }
        return result
    }

    var formatName: String { container == .cr3 ? "Canon CR3" : container == .raf ? "Fujifilm RAF" : "camera raw" }

    /// The `damaged input` note of a raw LibRaw cannot decode, placed at its largest image data block (the
    /// sensor data, as far as the structure tells).
    static func undecodableNote(_ why: String, _ layout: RawTIFFLayout) -> Note {
        let raw = layout.rawData ?? layout.imageData.max { $0.count < $1.count }
        let at = raw?.lowerBound ?? 0
        let what = raw.map { "the raw data (\($0.count) bytes at byte \($0.lowerBound))" } ?? "the raw data"
        return Note(.warning, code: "damaged-input",
                    "damaged input at byte \(at): \(why), so \(what) could not be verified by decoding; the metadata was cleaned in place and every other byte proven identical",
                    offset: at)
    }

    /// What the raw needs to decode identically stays, with its reason; everything else goes as the policy says
    /// (`RawDecodeBisection`; `RawTIFFLayout.required` for what is kept whatever LibRaw does).
    public func settle(_ findings: [Finding], input: any ByteSource, scan: ScanResult<RawTIFFLayout>, policy: Policy) throws -> [Finding] {
        try RawDecodeBisection.settle(findings, input: input, layout: scan.layout, policy: policy)
    }

    public func clean(_ input: any ByteSource, scan: ScanResult<RawTIFFLayout>, plan: CleanPlan, to output: any OutputSink) throws -> CleanResult {
        let layout = scan.layout
        var result = CleanResult(method: .remux)
        let sensitive = RawDecodeBisection.sensitiveNeeded(plan.findings, layout: layout)
        guard sensitive.isEmpty else {
            throw MetascrubError.unsupported(format: formatName, reason:
                "LibRaw decodes this raw differently without \(sensitive.joined(separator: ", ")), which identifies the camera, its owner, the place or the time; the raw is refused rather than cleaned with it left in")
        }
        // A raw LibRaw cannot decode cannot be proven by decoding afterwards: refused before anything is written
        // under `damaged: refuse`, otherwise cleaned in place with a note and proven byte by byte.
        if layout.undecodable == nil {
            do {
                _ = try Self.fingerprint(input, layout: layout)
                // Known only when the bisection had to ask (`RawDecodeStability`): no decode here.
                if try RawDecodeStability.known(input) == false {
                    guard plan.policy.damaged == .clean else {
                        throw MetascrubError.unsupported(format: formatName, reason:
                            "\(RawDecodeStability.reason), so a cleaned copy could not be proven to decode the same")
                    }
                    result.notes.append(Self.undecodableNote(RawDecodeStability.reason, layout))
                }
            } catch let error as MetascrubError {
                throw error
            } catch {
                guard plan.policy.damaged == .clean else {
                    throw MetascrubError.unsupported(format: formatName, reason: "LibRaw cannot decode it (\(error)), so a cleaned copy could not be proven to decode the same")
                }
                // The error already names LibRaw; say it once.
                let why = if case let NativeError.library(_, message) = error { message } else { "\(error)" }
                result.notes.append(Self.undecodableNote("LibRaw cannot decode this raw (\(why))", layout))
            }
        }
        let patches = try RawTIFFPatcher.patches(layout, source: input, plan: plan, notes: &result.notes)
        result.ledger = try patches.plan(size: input.size, format: "camera raw").write(from: input, to: output)
        return result
    }

    public func verifyContent(original: any ByteSource, _ layout: RawTIFFLayout, cleaned: any ByteSource, _ after: RawTIFFLayout,
                              result: CleanResult) throws -> ContentCheck {
        let method = "LibRaw decodes identical sensor data and colour data; every byte outside the cleaned metadata identical"
        guard original.size == cleaned.size else {
            return ContentCheck(method: method, passed: false, detail: "the cleaned raw changed size")
        }
        // Everything the cleaner does not write to (image data, colour and lens data, the kept maker-note
        // fields) is the same byte for byte: the whole proof for a raw LibRaw cannot decode.
        let whole = 0..<original.size
        guard try ByteComparison.equal(original, whole, cleaned, whole, skipping: try layout.writable(in: original)) else {
            return ContentCheck(method: method, passed: false, detail: "bytes outside the cleaned metadata differ")
        }
        let before: RawFingerprint
        do {
            before = try Self.fingerprint(original, layout: layout)
        } catch {
            // Only a clean under `damaged: clean` gets here (it refuses such a raw otherwise).
            return ContentCheck(method: "every byte outside the cleaned metadata identical (LibRaw cannot decode this raw)", passed: true,
                                detail: "\(original.size) bytes, \(try layout.writable(in: original).count) metadata range(s) changed at most")
        }
        // A decode that differs from itself compares nothing (`RawDecodeStability`): the byte proof above is the proof.
        if try RawDecodeStability.known(original) == false {
            return ContentCheck(method: "every byte outside the cleaned metadata identical (\(RawDecodeStability.reason))", passed: true,
                                detail: "\(original.size) bytes, \(try layout.writable(in: original).count) metadata range(s) changed at most")
        }
        let decoded: RawFingerprint
        do {
            decoded = try Self.fingerprint(cleaned, layout: layout)
        } catch {
            return ContentCheck(method: method, passed: false, detail: "LibRaw cannot decode the cleaned raw (\(error))")
        }
        guard before.pixels == decoded.pixels else {
            return ContentCheck(method: method, passed: false, detail: "LibRaw decodes different sensor data")
        }
        guard before.colour == decoded.colour else {
            return ContentCheck(method: method, passed: false, detail: "LibRaw reads different colour data (black/white levels, multipliers or matrices)")
        }
        return ContentCheck(method: method, passed: true, detail: "\(before.width)x\(before.height) sensor data")
    }

    /// LibRaw opens a file by its descriptor's path, so a large raw is not copied into memory; a decode of the same
    /// bytes earlier in the process is reused (`RawDecodeMemo`). A raw whose image data runs past the end of the
    /// file is not decoded: LibRaw fills the missing part from whatever memory holds (two decodes of the same file
    /// differ), so its decode proves nothing; it is undecodable.
    static func fingerprint(_ source: any ByteSource, layout: RawTIFFLayout) throws -> RawFingerprint {
        guard !layout.truncated else {
            throw NativeError.library(name: "LibRaw", message: "its image data runs past the end of the file, so LibRaw would decode bytes that are not there")
        }
        return try RawDecodeMemo.fingerprint(source)
    }
}

/// The same-size replacements that clean a raw under a plan.
enum RawTIFFPatcher {
    static func patches(_ layout: RawTIFFLayout, source: any ByteSource, plan: CleanPlan, notes: inout [Note]) throws -> InPlacePatches {
        var drops: [Int64: Set<UInt16>] = [:]
        var orders: [Int64: ByteOrder] = [:]
        var zero: [Range<Int64>] = []
        var blank: [Range<Int64>] = []
        var overwrites: [(Range<Int64>, [UInt8])] = []
        // A field of a maker note that goes whole is not edited first (its rewritten table would outlive the note).
        let removes = { (item: Int) in !plan.keeps(item) && layout.partOf[item].map(plan.keeps) ?? true }
        for (item, action) in layout.actions where removes(item) {
            switch action {
            case .drop(let ifd, let tag, let ranges, let order):
                drops[ifd, default: []].insert(tag)
                if let order { orders[ifd] = order }
                zero += ranges
            case .blank(let range):
                blank.append(range)
            case .overwrite(let range, let bytes):
                overwrites.append((range, bytes))
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
        for (range, bytes) in overwrites where !(tables + patches.ranges).contains(where: { $0.overlaps(range) }) {
            patches.add(range.lowerBound, bytes)
        }
        for piece in ByteSplice.subtract(blank, tables + patches.ranges) { patches.zero(piece) }
        // Last: a new Nikon key re-enciphers its blocks over the fields already cleared inside them.
        for recipher in layout.nikon { try recipher.apply(removes: removes, source: source, to: &patches) }
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
