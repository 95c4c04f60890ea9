// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// What the Ogg scanner found about the first logical stream's header packets and the pages after them.
public struct OggLayout: Sendable {
    enum Codec: String { case vorbis = "Vorbis", opus = "Opus", speex = "Speex", theora = "Theora", flac = "FLAC" }

    var codec: Codec
    var serial: UInt32
    /// Page 0 (the identification header, alone on its page).
    var firstPage: OggPage
    /// Header packets after the identification header: the comment packet first.
    var packets: [[UInt8]]
    var comment: VorbisComment?
    /// Offset of the comment list inside the comment packet, and the bytes that follow it (Vorbis framing
    /// bit; Opus may carry binary data there).
    var commentPrefix: [UInt8] = []
    var extraItem: Int?
    /// Pages holding packets 1..n of the headers, and where the first audio page starts.
    var headerPages: Int
    var audioStart: Int64
    /// End of the last Ogg page; bytes after it are a trailer.
    var pagesEnd: Int64
    /// A damaged file's last page, cut by the end of the file: copied as it is from here to the end.
    var cutPage: Int64?
    var trailerItem: Int?
    var blockItems: [Int] = []
    /// Reasons the stream cannot be rewritten (multiplexed, chained, audio sharing the last header page).
    var cannotClean: String?
}

/// Ogg Vorbis, Opus, Speex and Theora (single logical stream): the comment header packet is rebuilt with
/// only the kept fields (vendor string emptied under strict), the header pages re-paginated, and every later
/// page renumbered with its CRC recomputed when the header page count changes; audio pages' packets, lacing
/// and granule positions stay byte for byte. Ogg FLAC is scanned but not cleaned.
public struct OggFormat: FormatHandler {
    public init() {}
    static let format = "Ogg"
    static let maxHeaderBytes = 32 << 20
    static let maxPages = 1 << 24

    public func scan(_ input: any ByteSource, options: ScanOptions) throws -> ScanResult<OggLayout> {
        let first = try OggPage.read(input, at: 0)
        guard first.flags & OggPage.beginOfStream != 0 else {
            throw MetascrubError.malformed(format: Self.format, path: "page 0", offset: 0, reason: "first page does not begin a stream")
        }
        let firstBytes = try input.read(at: 0, count: first.headerSize + first.bodySize)
        guard OggPage.crcMatches(firstBytes) else {
            throw MetascrubError.malformed(format: Self.format, path: "page 0", offset: 0, reason: "page CRC mismatch")
        }
        let idPacket = Array(firstBytes[first.headerSize...])
        guard first.lacing.last.map({ $0 < 255 }) ?? false, first.lacing.dropLast().allSatisfy({ $0 == 255 }) else {
            throw MetascrubError.malformed(format: Self.format, path: "page 0", offset: 0, reason: "the identification header is not alone on the first page")
        }
        let codec: OggLayout.Codec
        var headerCount: Int
        func starts(_ p: [UInt8]) -> Bool { idPacket.count >= p.count && idPacket[0..<p.count].elementsEqual(p) }
        if starts([0x01] + Array("vorbis".utf8)) { codec = .vorbis; headerCount = 2 }
        else if starts(Array("OpusHead".utf8)) { codec = .opus; headerCount = 1 }
        else if starts(Array("Speex   ".utf8)) {
            codec = .speex
            headerCount = 1 + (idPacket.count >= 72 ? Int(min(ByteOrder.little.u32(idPacket, 68), 16)) : 0)
        } else if starts([0x80] + Array("theora".utf8)) { codec = .theora; headerCount = 2 }
        else if starts([0x7F] + Array("FLAC".utf8)), idPacket.count >= 9 {
            codec = .flac
            headerCount = BigEndian.u16(idPacket, 7)
        } else {
            throw MetascrubError.unsupported(format: Self.format, reason: "the Ogg stream's codec is not one metascrub can clean (Vorbis, Opus, Speex, Theora)")
        }
        guard headerCount > 0 else {
            throw MetascrubError.malformed(format: Self.format, path: "identification header", offset: first.body.lowerBound, reason: "no comment header announced")
        }

        // Reassemble the header packets from the following pages of the same stream.
        var packets: [[UInt8]] = []
        var partial: [UInt8] = []
        var position = first.end
        var headerPages = 0
        var cannotClean: String?
        var total = 0
        while packets.count < headerCount {
            let page = try OggPage.read(input, at: position)
            position = page.end
            guard page.serial == first.serial else {
                cannotClean = "multiplexed Ogg streams (several logical streams) are not supported yet"
                continue
            }
            headerPages += 1
            total += page.bodySize
            guard total <= Self.maxHeaderBytes else {
                throw MetascrubError.limitExceeded(format: Self.format, path: "header packets", offset: page.offset, limit: "\(Self.maxHeaderBytes) bytes")
            }
            let bytes = try input.read(at: page.offset, count: page.headerSize + page.bodySize)
            guard OggPage.crcMatches(bytes) else {
                throw MetascrubError.malformed(format: Self.format, path: "header page #\(page.sequence)", offset: page.offset, reason: "page CRC mismatch")
            }
            let body = Array(bytes[page.headerSize...])
            var at = 0
            for (index, lace) in page.lacing.enumerated() {
                partial += body[at..<at + Int(lace)]
                at += Int(lace)
                if lace < 255 {
                    packets.append(partial)
                    partial = []
                    if packets.count == headerCount && index != page.lacing.count - 1 {
                        cannotClean = "the first audio packet shares a page with the last header packet"
                    }
                    if packets.count == headerCount { break }
                }
            }
        }
        let audioStart = position
        var layout = OggLayout(codec: codec, serial: first.serial, firstPage: first, packets: packets, headerPages: headerPages,
                               audioStart: audioStart, pagesEnd: audioStart, cannotClean: cannotClean)
        var found = ItemCollector(options)
        try itemiseComment(&layout, options: options, into: &found.items)
        // Cover art in a METADATA_BLOCK_PICTURE comment is looked into by its own handler (not in Ogg FLAC, whose
        // metadata packets are not rewritten).
        if layout.codec != .flac, var comment = layout.comment {
            comment.itemisePictures(into: &found)
            layout.comment = comment
        }

        // Walk the remaining page headers: bounds, other streams, bytes after the last page.
        var pages = 0
        while position + 4 <= input.size, try input.read(at: position, count: 4).elementsEqual("OggS".utf8) {
            pages += 1
            guard pages <= Self.maxPages else {
                throw MetascrubError.limitExceeded(format: Self.format, path: "pages", offset: position, limit: "\(Self.maxPages) pages")
            }
            let page: OggPage
            do {
                page = try OggPage.read(input, at: position)
            } catch let error as MetascrubError {
                // Cut inside an audio page: only coded audio is lost; it is copied as it is.
                guard case .truncated = error else { throw error }
                try found.damaged(error, at: position, "the file ends inside the Ogg page at \(position) (\(error.description)); it is copied byte for byte, its CRC cannot be checked")
                layout.cutPage = position
                break
            }
            if page.serial != first.serial && layout.cannotClean == nil {
                layout.cannotClean = page.flags & OggPage.beginOfStream != 0 && page.offset >= audioStart
                    ? "chained or multiplexed Ogg streams are not supported yet" : "multiplexed Ogg streams are not supported yet"
            }
            position = page.end
        }
        layout.pagesEnd = position
        if position < input.size, layout.cutPage == nil {
            layout.trailerItem = try found.trailer("ogg:trailer", position..<input.size, in: input, location: "after the last page", after: "the last Ogg page")
        }
        return found.result(layout)
    }

    /// Items of the comment packet (for Ogg FLAC: of every metadata block packet).
    private func itemiseComment(_ layout: inout OggLayout, options: ScanOptions, into items: inout [MetadataItem]) throws {
        guard let packet = layout.packets.first else { return }
        let origin = layout.firstPage.end
        let location = "\(layout.codec.rawValue) comment header"
        switch layout.codec {
        case .flac:
            for (index, block) in layout.packets.enumerated() where block.count >= 4 {
                let type = block[0] & 0x7F
                if type == 4 {
                    var comment = try VorbisComment.parse(block, at: 4, format: Self.format, path: location, origin: origin)
                    comment.itemise(location: location, origin: origin, options: options, into: &items)
                    layout.comment = comment
                } else if type != 1 && type != 3 {
                    let key = type == 6 ? "flac:picture" : type == 2 ? "flac:application" : type == 5 ? "flac:cuesheet" : "flac:block:\(type)"
                    items.append(MetadataItem(key: key, category: type == 5 ? .content : .embedded, location: "FLAC header packet #\(index + 1)",
                                              offset: origin, length: Int64(block.count), detail: "FLAC metadata block in Ogg, \(block.count) bytes"))
                    layout.blockItems.append(items.count - 1)
                }
            }
            return
        case .vorbis: layout.commentPrefix = [0x03] + Array("vorbis".utf8)
        case .opus: layout.commentPrefix = Array("OpusTags".utf8)
        case .theora: layout.commentPrefix = [0x81] + Array("theora".utf8)
        case .speex: layout.commentPrefix = []
        }
        guard packet.starts(with: layout.commentPrefix) else {
            throw MetascrubError.malformed(format: Self.format, path: location, offset: origin, reason: "the second packet is not a comment header")
        }
        var comment = try VorbisComment.parse(packet, at: layout.commentPrefix.count, format: Self.format, path: location, origin: origin)
        comment.itemise(location: location, origin: origin, options: options, into: &items)
        // After the list: Vorbis's framing bit; Opus may keep binary data when its first byte's low bit is set.
        let rest = packet[comment.end...]
        let extra = layout.codec == .vorbis ? rest.dropFirst() : rest
        if extra.contains(where: { $0 != 0 }) {
            items.append(MetadataItem(key: "vorbis:extra", category: .content, location: "\(location)/after the comments", offset: origin,
                                      length: Int64(rest.count), detail: "\(rest.count) bytes after the comment list", isUnknown: true))
            layout.extraItem = items.count - 1
        }
        layout.comment = comment
    }

    public func clean(_ input: any ByteSource, scan: ScanResult<OggLayout>, plan: CleanPlan, to output: any OutputSink) throws -> CleanResult {
        let layout = scan.layout
        guard let comment = layout.comment else {
            throw MetascrubError.verificationFailed(reason: "the Ogg scan found no comment header to clean")
        }
        let keepsComment = comment.unchanged(keeps: plan.keeps) && (layout.extraItem.map(plan.keeps) ?? true)
            && layout.blockItems.allSatisfy(plan.keeps)
        let keepsTrailer = layout.trailerItem.map(plan.keeps) ?? true
        if keepsComment {
            var out = OutputPlan()
            out.copy(0..<(keepsTrailer ? input.size : layout.pagesEnd))
            try out.write(from: input, to: output)
            return CleanResult(method: .remux)
        }
        if let reason = layout.cannotClean { throw MetascrubError.unsupported(format: Self.format, reason: reason) }
        guard layout.codec != .flac else {
            throw MetascrubError.unsupported(format: Self.format, reason: "rewriting Ogg FLAC metadata packets is not supported yet")
        }
        var packet = layout.commentPrefix + comment.rebuilt(keeps: plan.keeps, cleaned: try scan.cleanedEmbeddedFiles(plan))
        if layout.codec == .vorbis { packet.append(1) }
        let second = try OggPage.read(input, at: layout.firstPage.end)
        let pages = OggPage.paginate([packet] + layout.packets.dropFirst(), serial: layout.serial, firstSequence: second.sequence)
        let delta = UInt32(truncatingIfNeeded: pages.count - layout.headerPages)

        var head = OutputPlan()
        head.copy(0..<layout.firstPage.end)
        for page in pages { head.append(page) }
        if delta == 0 { head.copy(layout.audioStart..<layout.pagesEnd) }
        try head.write(from: input, to: output)
        if delta != 0 {
            // Every later page gets its sequence number moved by delta, and so a new CRC.
            var position = layout.audioStart
            while position < layout.pagesEnd {
                let page = try OggPage.read(input, at: position)
                let bytes = try input.read(at: page.offset, count: page.headerSize + page.bodySize)
                guard OggPage.crcMatches(bytes) else {
                    throw MetascrubError.malformed(format: Self.format, path: "page #\(page.sequence)", offset: page.offset, reason: "page CRC mismatch")
                }
                try output.write(OggPage.serialise(flags: page.flags, granule: page.granule, serial: page.serial,
                                                   sequence: page.sequence &+ delta, lacing: page.lacing, body: bytes[page.headerSize...]))
                position = page.end
            }
        }
        if keepsTrailer, layout.pagesEnd < input.size { try output.copy(from: input, offset: layout.pagesEnd, count: input.size - layout.pagesEnd) }
        var result = CleanResult(method: .remux)
        if delta != 0 {
            result.notes.append(Note(.info, code: "ogg-renumbered", "the comment header now takes a different number of pages; later pages were renumbered and their CRCs recomputed"))
        }
        return result
    }

    public func verifyContent(original: any ByteSource, _ before: OggLayout, cleaned: any ByteSource, _ after: OggLayout, result: CleanResult) throws -> ContentCheck {
        let method = "identification and setup headers, and every later page's packets, lacing and granule positions byte-identical"
        guard before.codec == after.codec, before.packets.dropFirst().elementsEqual(after.packets.dropFirst()),
              try ByteComparison.equal(original, before.firstPage.body, cleaned, after.firstPage.body) else {
            return ContentCheck(method: method, passed: false, detail: "codec headers differ")
        }
        var a = before.audioStart, b = after.audioStart
        while a < before.pagesEnd || b < after.pagesEnd {
            guard a < before.pagesEnd, b < after.pagesEnd else {
                return ContentCheck(method: method, passed: false, detail: "different number of audio pages")
            }
            let p = try OggPage.read(original, at: a), q = try OggPage.read(cleaned, at: b)
            guard p.flags == q.flags, p.granule == q.granule, p.serial == q.serial, p.lacing == q.lacing,
                  try ByteComparison.equal(original, p.body, cleaned, q.body) else {
                return ContentCheck(method: method, passed: false, detail: "audio page at \(a) differs")
            }
            a = p.end
            b = q.end
        }
        if let cut = before.cutPage {
            guard let cutAfter = after.cutPage, original.size - cut == cleaned.size - cutAfter,
                  try ByteComparison.equal(original, cut..<original.size, cleaned, cutAfter..<cleaned.size) else {
                return ContentCheck(method: method, passed: false, detail: "the cut last page at \(cut) differs")
            }
        }
        return ContentCheck(method: method, passed: true)
    }
}
