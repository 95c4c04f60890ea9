// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// Rewrites an MP4/MOV file without the removed items. `moov` is rebuilt (dropped atoms, zeroed times, blank
/// handler and compressor names, removed tracks, renumbered keys, rewritten chunk offsets); sample data is
/// copied byte for byte, except the chunks of removed tracks, which are cut out of `mdat`, and neutralised
/// SEI payloads, which are overwritten in place. Fragments are copied, with absolute offsets in them re-pointed.
struct MP4Cleaner {
    let source: any ByteSource
    let layout: MP4Layout
    let plan: CleanPlan
    let reader: BoxReader
    var result = CleanResult(method: .remux)

    private var removedTracks = Set<UInt32>()
    private var dropped = Set<Int64>()
    private var handlerNames = Set<Int64>()
    /// Bytes in `mdat` no track references, cut with the removed tracks' chunks.
    private var unreferenced: [Range<Int64>] = []
    /// The kept tracks' chunks, merged and sorted: the ledger's coded data.
    private var codedChunks: [Range<Int64>] = []
    private var patches: [(range: Range<Int64>, bytes: [UInt8])] = []
    private var xmp: [Int64: (box: Box, outcome: EmbeddedMetadata.Outcome)] = [:]
    /// Embedded files kept cleaned (item → cleaned bytes), and the boxes rebuilt around them (offset → bytes).
    private let cleaned: [Int: [UInt8]]
    private var rebuilt: [Int64: [UInt8]] = [:]
    /// Bytes cut out of sample entries, by the offset of their `stsd`.
    private var entryCuts: [Int64: [SampleEntryCut]] = [:]

    init(source: any ByteSource, layout: MP4Layout, plan: CleanPlan, cleaned: [Int: [UInt8]] = [:]) {
        self.source = source
        self.layout = layout
        self.plan = plan
        self.reader = BoxReader(source, format: layout.format)
        self.cleaned = cleaned
    }

    var format: String { layout.format }

    mutating func run(to output: any OutputSink) throws -> CleanResult {
        try decide()
        let keptTracks = layout.tracks.filter { !removedTracks.contains($0.id) }
        // Every kept chunk offset is rewritten, so samples kept in another file cannot be followed.
        for track in keptTracks where !track.selfContained && !track.samples.chunks.isEmpty {
            throw MetascrubError.unsupported(format: format, reason: "track \(track.id) keeps its samples in another file; nothing was written")
        }
        try checkFragments()
        // A damaged track whose sample sizes are unknown cannot have its samples located with certainty, so they cannot be cut out of the sample
        // data; removing such a track is only safe when the file holds no sample data at all.
        let sampleData = layout.top.filter { $0.type == "mdat" }.reduce(Int64(0)) { $0 + $1.payloadSize }
        for track in layout.tracks where removedTracks.contains(track.id) && sampleData > 0 {
            if let damage = track.samples.damage, !track.samples.sizesKnown {
                throw MetascrubError.malformed(format: format, path: track.chunkOffsetBox?.path ?? track.node.box.path,
                                               offset: damage.offset ?? track.node.box.offset,
                                               reason: "track \(track.id) is to be removed but its damaged sample table cannot say where its samples lie in the \(sampleData) bytes of sample data; nothing was written")
            }
        }

        // Top-level pieces; moov's bytes depend on where the data lands, so it is built last.
        var pieces: [Piece] = []
        let keptChunks = keptTracks.flatMap { $0.samples.chunks.map(\.range) }
        let removedChunks = layout.tracks.filter { removedTracks.contains($0.id) }.flatMap { $0.samples.chunks.map(\.range) }
        let cuts = ByteSplice.subtract(removedChunks + unreferenced, keptChunks)
        // Kept samples are coded data (the content check compares them); other bytes of a sample data box, and SEI
        // user data the policy keeps inside samples (items the scan read, which the check skips), are structure.
        codedChunks = ByteSplice.subtract(keptChunks, layout.seiRanges)
        for (index, box) in layout.top.enumerated() {
            if index == layout.moovIndex {
                pieces.append(.moov)
            } else if dropped.contains(box.offset) {
                continue
            } else if let edit = xmp[box.offset] {
                switch edit.outcome {
                case .removed: continue
                case .unchanged: pieces.append(.copy(box))
                case .rebuilt(let packet): pieces.append(.bytes(box, try rebuiltXMPBox(box, packet)))
                }
            } else if box.type == "mdat" {
                let inside = cuts.filter { $0.overlaps(box.payloadRange) }
                let replaced = patches.filter { box.payloadRange.contains($0.range.lowerBound) }
                if inside.isEmpty && replaced.isEmpty {
                    pieces.append(.copy(box))
                } else {
                    pieces.append(.splice(box, try ByteSplice(range: box.payloadRange, cuts: inside, replacements: replaced, coded: codedChunks)))
                }
            } else if ["free", "skip", "wide"].contains(box.type) {
                continue
            } else if let node = layout.parsedTop[index], ["udta", "meta"].contains(box.type) {
                guard let bytes = try build(node, offsets: { _ in nil }) else { continue }
                pieces.append(.bytes(box, bytes))
            } else if patches.contains(where: { box.range.contains($0.range.lowerBound) }) {
                pieces.append(.bytes(box, try patchedBytes(box)))
            } else {
                pieces.append(.copy(box))
            }
        }
        if plan.layout.faststart, let moov = pieces.firstIndex(where: { if case .moov = $0 { true } else { false } }),
           let firstData = pieces.firstIndex(where: { if case .copy(let b) = $0 { b.type == "mdat" } else if case .splice(let b, _) = $0 { b.type == "mdat" } else { false } }),
           firstData < moov {
            pieces.insert(pieces.remove(at: moov), at: firstData)
            result.notes.append(Note(.info, code: "mp4-faststart", "the movie box was moved before the sample data (--faststart)"))
        }
        if let trailer = layout.trailer, let owner = layout.trailerItem, plan.keeps(owner) {
            pieces.append(.copy(Box(type: "    ", offset: trailer.lowerBound, size: Int64(trailer.count), headerSize: 0, sizeForm: .compact, path: "trailer")))
        }

        // Settle moov: its size moves the data after it, which changes the offsets it holds.
        var moovBytes: [UInt8] = []
        if let moov = layout.moov {
            var size = moov.box.size
            for _ in 0..<6 {
                let map = OffsetMap(pieces: pieces, moovSize: size)
                moovBytes = try build(moov, offsets: map.newOffset) ?? []
                if Int64(moovBytes.count) == size { break }
                size = Int64(moovBytes.count)
            }
            guard Int64(moovBytes.count) == size else {
                throw MetascrubError.verificationFailed(reason: "the rewritten movie box did not settle to one size")
            }
        }
        let map = OffsetMap(pieces: pieces, moovSize: Int64(moovBytes.count))

        let fragments = Dictionary(layout.parsedTop.values.filter { ["moof", "mfra"].contains($0.type) }.map { ($0.box.offset, $0) },
                                   uniquingKeysWith: { first, _ in first })
        var out = OutputPlan()
        for piece in pieces {
            switch piece {
            case .moov: out.append(moovBytes)
            case .copy(let box):
                if let node = fragments[box.offset] {
                    let fixes = try fragmentOffsets(node, map: map)
                    if fixes.isEmpty { out.copy(box.range, because: .structure) } else { out.append(try patched(box, fixes)) }
                } else if box.type == "mdat" {
                    out.copy(box.offset..<box.payloadRange.lowerBound, because: .structure)
                    // A fragment's whole payload is compared by the content check.
                    let coded = layout.fragmented ? ByteSplice.subtract([box.payloadRange], layout.seiRanges) : codedChunks
                    out.copy(box.payloadRange, coded: coded, otherwise: .structure)
                } else {
                    out.copy(box.range, because: layout.trailer?.lowerBound == box.offset && box.headerSize == 0
                             ? .keptItem(layout.trailerItem ?? -1) : .structure)
                }
            case .bytes(_, let bytes): out.append(bytes)
            case .splice(let box, let splice): out.append(box, spliced: splice)
            }
        }
        result.ledger = try out.write(from: source, to: output)
        return result
    }

    // MARK: - Decisions

    private mutating func decide() throws {
        // A cover kept cleaned: the `covr` entry with its `data` box's type and locale and the cleaned picture.
        for (index, picture) in cleaned {
            guard let box = layout.covers[index] else { continue }
            let payload = try reader.payload(of: box)
            rebuilt[box.offset] = BoxWriter.box("covr", BoxWriter.box("data", Array(payload[8..<16]) + picture))
        }
        for (index, edit) in layout.edits where !plan.keeps(index) && cleaned[index] == nil {
            switch edit {
            case .drop(let box): dropped.insert(box.offset)
            case .patch(let list): patches += list
            case .handlerName(let box): handlerNames.insert(box.offset)
            case .dropTrack(let id): removedTracks.insert(id)
            case .cut(let list): unreferenced += list
            case .replace(let box, let bytes): rebuilt[box.offset] = bytes
            case .cutSampleEntry(let stsd, let entry, let cut): entryCuts[stsd.offset, default: []].append(SampleEntryCut(entry: entry, cut: cut))
            case .xmp, .none: break
            }
        }
        // XMP packets: rebuilt with what the policy keeps, whatever item decided.
        for (_, edit) in layout.edits {
            guard case .xmp(let box, let content) = edit else { continue }
            xmp[box.offset] = (box, try content.apply(plan: plan, notes: &result.notes))
        }
        if layout.tracks.allSatisfy({ removedTracks.contains($0.id) }), !layout.tracks.isEmpty {
            throw MetascrubError.unsupported(format: format, reason: "the policy would remove every track; nothing was written")
        }
        patches.sort { $0.range.lowerBound < $1.range.lowerBound }
    }

    private func checkFragments() throws {
        guard !removedTracks.isEmpty else { return }
        for (_, node) in layout.parsedTop where node.type == "moof" {
            for traf in node.children("traf") {
                guard let tfhd = traf.child("tfhd") else { continue }
                let payload = try reader.payload(of: tfhd.box)
                if payload.count >= 8, removedTracks.contains(UInt32(BigEndian.u32(payload, 4))) {
                    throw MetascrubError.unsupported(format: format,
                                                     reason: "removing a track from a fragmented movie is not supported yet; nothing was written")
                }
            }
        }
    }

    // MARK: - Building boxes

    /// The node rebuilt, or nil when it goes. `offsets` maps an old chunk range to its new file offset.
    private func build(_ node: MovieNode, offsets: (Range<Int64>) -> Int64?) throws -> [UInt8]? {
        let box = node.box
        if let bytes = rebuilt[box.offset] { return bytes }
        if let cuts = entryCuts[box.offset] { return try SampleEntryCut.apply(cuts, to: patchedBytes(box), of: box) }
        if dropped.contains(box.offset) { return nil }
        if let edit = xmp[box.offset] {
            switch edit.outcome {
            case .removed: return nil
            case .unchanged: return try reader.bytes(of: box)
            case .rebuilt(let packet): return try rebuiltXMPBox(box, packet)
            }
        }
        if node.type == "trak", let track = layout.tracks.first(where: { $0.node.box.offset == box.offset }), removedTracks.contains(track.id) {
            return nil
        }
        if handlerNames.contains(box.offset) {
            let payload = try reader.payload(of: box)
            return BoxWriter.box("hdlr", Array(payload.prefix(24)) + [0])
        }
        if ["stco", "co64"].contains(node.type), let track = layout.tracks.first(where: { $0.chunkOffsetBox?.offset == box.offset }) {
            let moved = try track.samples.chunks.map { chunk -> Int64 in
                guard let new = offsets(chunk.range) ?? pastTheEnd(chunk, of: track, offsets: offsets) else {
                    throw MetascrubError.unsupported(format: format, reason: "a chunk of track \(track.id) at \(chunk.offset) lies outside the kept data; nothing was written")
                }
                return new
            }
            return SampleTable.offsetBox(moved, preferWide: track.samples.wide)
        }
        guard MovieNode.containers[node.type] != nil else { return try patchedBytes(box) }

        var children: [[UInt8]] = []
        for child in node.children {
            if ["free", "skip", "wide"].contains(child.type) { continue }
            if let bytes = try build(child, offsets: offsets) { children.append(bytes) }
        }
        switch node.type {
        case "udta", "ilst", "tref", "edts", "mvex": if children.isEmpty { return nil }
        default: break
        }
        if node.type == "tref" { children = try trackReferences(node) ; if children.isEmpty { return nil } }
        if node.type == "meta" {
            guard let rebuilt = try keyedMeta(node, built: children) else { return nil }
            children = rebuilt
        }
        let fields = try source.read(at: box.payloadOffset, count: node.fieldsSize, format: format, path: box.path)
        return BoxWriter.header(box.type, payloadSize: Int64(fields.count + children.reduce(0) { $0 + $1.count }),
                                extendedType: box.extendedType) + fields + children.flatMap { $0 }
    }

    /// A leaf box's bytes with the in-place patches that fall inside it.
    private func patchedBytes(_ box: Box) throws -> [UInt8] {
        let inside = patches.filter { box.range.contains($0.range.lowerBound) }
        return inside.isEmpty ? try reader.bytes(of: box) : try patched(box, inside)
    }

    private func patched(_ box: Box, _ fixes: [(range: Range<Int64>, bytes: [UInt8])]) throws -> [UInt8] {
        var bytes = try reader.bytes(of: box)
        for fix in fixes {
            let at = Int(fix.range.lowerBound - box.offset)
            guard at >= 0, at + fix.bytes.count <= bytes.count else { continue }
            bytes.replaceSubrange(at..<at + fix.bytes.count, with: fix.bytes)
        }
        return bytes
    }

    /// `tref` children without references to removed tracks.
    private func trackReferences(_ tref: MovieNode) throws -> [[UInt8]] {
        try tref.children.compactMap { ref in
            let payload = try reader.payload(of: ref.box)
            var ids: [UInt8] = []
            for at in stride(from: 0, to: payload.count - 3, by: 4) where !removedTracks.contains(UInt32(BigEndian.u32(payload, at))) {
                ids += payload[at..<at + 4]
            }
            return ids.isEmpty ? nil : BoxWriter.box(ref.type, ids)
        }
    }

    /// A `meta` box's rebuilt children, with `keys` trimmed to the keys kept `ilst` entries use and the entries
    /// renumbered; nil when nothing but its handler is left.
    private func keyedMeta(_ meta: MovieNode, built: [[UInt8]]) throws -> [[UInt8]]? {
        let meaningful = built.filter { bytes in bytes.count >= 8 && !["hdlr", "keys", "dinf"].contains(FourCC(bytes: bytes[4..<8])) }
        guard !meaningful.isEmpty else { return nil }
        guard let keysNode = meta.child("keys"), let ilstIndex = built.firstIndex(where: { $0.count >= 8 && FourCC(bytes: $0[4..<8]) == "ilst" }) else {
            return built
        }
        // Old key records, in order.
        let payload = try reader.payload(of: keysNode.box)
        var c = ByteCursor(payload, origin: keysNode.box.payloadOffset, format: format, path: keysNode.box.path)
        let header = try c.take(4, "version and flags")
        let count = Int(try c.u32("key count"))
        var records: [[UInt8]] = []
        for _ in 0..<count {
            let size = Int(BigEndian.u32(c.bytes, c.position))
            records.append(try c.take(size, "key"))
        }
        // Renumber the kept ilst entries.
        let ilst = built[ilstIndex]
        var entries: [[UInt8]] = []
        var at = 8
        while at + 8 <= ilst.count {
            let size = BigEndian.u32(ilst, at)
            guard size >= 8, at + size <= ilst.count else { break }
            entries.append(Array(ilst[at..<at + size]))
            at += size
        }
        var newIndex: [Int: Int] = [:]
        var keptRecords: [[UInt8]] = []
        for i in entries.indices {
            let old = BigEndian.u32(entries[i], 4)
            guard old >= 1, old <= records.count else { continue }
            if newIndex[old] == nil {
                keptRecords.append(records[old - 1])
                newIndex[old] = keptRecords.count
            }
            let n = UInt32(newIndex[old] ?? 0)
            entries[i].replaceSubrange(4..<8, with: [UInt8(n >> 24), UInt8((n >> 16) & 0xFF), UInt8((n >> 8) & 0xFF), UInt8(n & 0xFF)])
        }
        var keysPayload = ByteWriter()
        keysPayload.append(header)
        keysPayload.u32(UInt32(keptRecords.count))
        for r in keptRecords { keysPayload.append(r) }
        var out: [[UInt8]] = []
        for bytes in built {
            let type = FourCC(bytes: bytes[4..<8])
            if type == "keys" {
                out.append(BoxWriter.box("keys", keysPayload.bytes))
            } else if type == "ilst" {
                out.append(BoxWriter.box("ilst", entries.flatMap { $0 }))
            } else {
                out.append(bytes)
            }
        }
        return out
    }

    private func rebuiltXMPBox(_ box: Box, _ packet: [UInt8]) throws -> [UInt8] {
        // `meta/xml ` is a full box: its version and flags stay in front of the packet.
        let prefix = box.type == "xml " ? try source.read(at: box.payloadOffset, count: 4) : []
        return BoxWriter.box(box.type, prefix + packet, extendedType: box.extendedType)
    }

    // MARK: - Fragments

    /// Absolute offsets inside a kept `moof` (explicit base data offsets) or `mfra` (fragment positions).
    private func fragmentOffsets(_ node: MovieNode, map: OffsetMap) throws -> [(range: Range<Int64>, bytes: [UInt8])] {
        var fixes: [(range: Range<Int64>, bytes: [UInt8])] = []
        func u64(_ v: Int64) -> [UInt8] { var w = ByteWriter(); w.u64(UInt64(v)); return w.bytes }
        if node.type == "moof" {
            for traf in node.children("traf") {
                guard let tfhd = traf.child("tfhd") else { continue }
                let payload = try reader.payload(of: tfhd.box)
                guard payload.count >= 16, (BigEndian.u32(payload, 0) & 1) != 0 else { continue }
                let old = Int64(bitPattern: UInt64(BigEndian.u32(payload, 8)) << 32 | UInt64(BigEndian.u32(payload, 12)))
                guard let new = map.newOffset(old..<old) else {
                    throw MetascrubError.unsupported(format: format, reason: "a fragment's base data offset points outside the kept data; nothing was written")
                }
                if new != old { fixes.append(((tfhd.box.payloadOffset + 8)..<(tfhd.box.payloadOffset + 16), u64(new))) }
            }
        } else {
            for tfra in node.children("tfra") {
                let payload = try reader.payload(of: tfra.box)
                var c = ByteCursor(payload, origin: tfra.box.payloadOffset, format: format, path: tfra.box.path)
                let (version, _) = try c.fullBoxHeader()
                try c.skip(4, "track ID")
                let sizes = try c.u32("field sizes")
                let count = Int(try c.u32("entry count"))
                let width = version == 1 ? 8 : 4
                let rest = Int((sizes >> 4) & 3) + Int((sizes >> 2) & 3) + Int(sizes & 3) + 3
                guard count <= c.remaining / max(1, 2 * width + rest) else { throw c.malformed("\(count) entries do not fit in the box") }
                for _ in 0..<count {
                    try c.skip(width, "time")
                    let at = c.fileOffset
                    let old = Int64(bitPattern: try c.uint(size: width, "moof offset"))
                    try c.skip(rest, "entry numbers")
                    guard let new = map.newOffset(old..<old) else { continue }
                    guard ByteWriter.fits(UInt64(new), size: width) else {
                        throw MetascrubError.unsupported(format: format, reason: "a fragment offset no longer fits its field; nothing was written")
                    }
                    var w = ByteWriter()
                    w.uint(UInt64(new), size: width)
                    if new != old { fixes.append((at..<at + Int64(width), w.bytes)) }
                }
            }
        }
        return fixes
    }

    // MARK: - Pieces and offsets

    enum Piece {
        case moov
        case copy(Box)
        case bytes(Box, [UInt8])
        case splice(Box, ByteSplice)

        func size(moovSize: Int64) -> Int64 {
            switch self {
            case .moov: moovSize
            case .copy(let box): box.size
            case .bytes(_, let bytes): Int64(bytes.count)
            case .splice(let box, let splice):
                box.headerSize(spliced: splice) + splice.newCount
            }
        }
    }
}

extension MP4Cleaner {
    /// A damaged track's chunk that starts past the end of the file (the file was cut before it) keeps its
    /// distance from the end of the file, so the index still lines up if the lost part is ever appended.
    func pastTheEnd(_ chunk: SampleTable.Chunk, of track: MP4Track, offsets: (Range<Int64>) -> Int64?) -> Int64? {
        guard track.samples.damage != nil, chunk.offset >= source.size, source.size > 0 else { return nil }
        let last = source.size - 1
        guard let lastNew = offsets(last..<last) else { return chunk.offset }
        return lastNew + (chunk.offset - last)
    }
}
