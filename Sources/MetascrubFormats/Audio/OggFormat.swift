// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// What the Ogg scanner found: every logical stream of every link, and the pages after them.
public struct OggLayout: Sendable {
    var chain: OggStreams
    /// End of the last Ogg page; bytes after it are a trailer.
    var pagesEnd: Int64
    /// A damaged file's last page, cut by the end of the file: copied as it is from here to the end.
    var cutPage: Int64?
    var trailerItem: Int?
}

/// Ogg Vorbis, Opus, Speex and Theora, multiplexed (an `.ogv`'s Theora and Vorbis streams) and chained (files
/// joined with `cat`, also reusing a serial number): each stream's comment header packet is rebuilt with only
/// the kept fields (vendor string emptied under strict), its header pages re-paginated, and every later page of
/// that stream renumbered with its CRC recomputed when its header page count changes; audio and video pages'
/// packets, lacing and granule positions stay byte for byte. Ogg FLAC is scanned but not cleaned.
public struct OggFormat: FormatHandler {
    public init() {}
    static let format = "Ogg"
    static let maxHeaderBytes = 32 << 20
    static let maxPages = 1 << 24
    static let maxStreams = 256

    public func scan(_ input: any ByteSource, options: ScanOptions) throws -> ScanResult<OggLayout> {
        let first = try OggPage.read(input, at: 0)
        guard first.flags & OggPage.beginOfStream != 0 else {
            throw MetascrubError.malformed(format: Self.format, path: "page 0", offset: 0, reason: "first page does not begin a stream")
        }
        var found = ItemCollector(options)
        var chain = OggStreams()
        var position: Int64 = 0
        var previousBegan = false
        var pages = 0
        var headerBytes = 0
        var cutPage: Int64?
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
                guard case .truncated = error, chain.streams.allSatisfy(\.headersDone), !chain.streams.isEmpty else { throw error }
                try found.damaged(error, at: position, "the file ends inside the Ogg page at \(position) (\(error.description)); it is copied byte for byte, its CRC cannot be checked")
                cutPage = position
                break
            }
            position = page.end
            let began = page.flags & OggPage.beginOfStream != 0
            defer { previousBegan = began }
            if began {
                // A stream beginning after other pages starts a new link of the chain.
                if !previousBegan || chain.linkStarts.isEmpty { chain.linkStarts.append(page.offset) }
                guard chain.streams.count < Self.maxStreams else {
                    throw MetascrubError.limitExceeded(format: Self.format, path: "streams", offset: page.offset, limit: "\(Self.maxStreams) streams")
                }
                let bytes = try input.read(at: page.offset, count: page.headerSize + page.bodySize)
                guard OggPage.crcMatches(bytes) else {
                    throw MetascrubError.malformed(format: Self.format, path: "page \(page.offset)", offset: page.offset, reason: "page CRC mismatch")
                }
                guard page.lacing.last.map({ $0 < 255 }) ?? false, page.lacing.dropLast().allSatisfy({ $0 == 255 }) else {
                    throw MetascrubError.malformed(format: Self.format, path: "page \(page.offset)", offset: page.offset,
                                                   reason: "the identification header is not alone on its page")
                }
                chain.streams.append(try OggStream(link: chain.linkStarts.count - 1, page: page, idPacket: Array(bytes[page.headerSize...]),
                                                   first: chain.streams.isEmpty))
                continue
            }
            guard let index = chain.stream(of: page) else {
                throw MetascrubError.malformed(format: Self.format, path: "page \(page.offset)", offset: page.offset,
                                               reason: "a page of stream \(page.serial), which no page began")
            }
            guard !chain.streams[index].headersDone else { continue }
            headerBytes += page.bodySize
            guard headerBytes <= Self.maxHeaderBytes else {
                throw MetascrubError.limitExceeded(format: Self.format, path: "header packets", offset: page.offset, limit: "\(Self.maxHeaderBytes) bytes")
            }
            let bytes = try input.read(at: page.offset, count: page.headerSize + page.bodySize)
            guard OggPage.crcMatches(bytes) else {
                throw MetascrubError.malformed(format: Self.format, path: "header page #\(page.sequence)", offset: page.offset, reason: "page CRC mismatch")
            }
            chain.streams[index].addHeaderPage(page, bytes: bytes)
        }
        if let unfinished = chain.streams.first(where: { !$0.headersDone }) {
            throw MetascrubError.truncated(format: Self.format, path: "\(unfinished.codec.rawValue) header packets", offset: position,
                                           needed: 1)
        }
        for index in chain.streams.indices {
            try itemiseComment(&chain.streams[index], options: options, into: &found.items)
            // Cover art in a METADATA_BLOCK_PICTURE comment is looked into by its own handler (not in Ogg FLAC,
            // whose metadata packets are not rewritten).
            if chain.streams[index].codec != .flac, var comment = chain.streams[index].comment {
                comment.itemisePictures(into: &found)
                chain.streams[index].comment = comment
            }
        }
        var layout = OggLayout(chain: chain, pagesEnd: position, cutPage: cutPage)
        if position < input.size, cutPage == nil {
            layout.trailerItem = try found.trailer("ogg:trailer", position..<input.size, in: input, location: "after the last page", after: "the last Ogg page")
        }
        return found.result(layout)
    }

    /// Items of the comment packet (for Ogg FLAC: of every metadata block packet).
    private func itemiseComment(_ layout: inout OggStream, options: ScanOptions, into items: inout [MetadataItem]) throws {
        guard let packet = layout.packets.first else { return }
        let origin = layout.headerPages.first ?? layout.firstPage.end
        let location = layout.location
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
        let chain = layout.chain
        guard chain.streams.contains(where: { $0.comment != nil }) else {
            throw MetascrubError.verificationFailed(reason: "the Ogg scan found no comment header to clean")
        }
        let keepsTrailer = layout.trailerItem.map(plan.keeps) ?? true
        let rewritten = chain.streams.indices.filter { !chain.streams[$0].keepsHeaders(plan.keeps) }
        if rewritten.isEmpty {
            var out = OutputPlan()
            var position: Int64 = 0
            let codecHeaders = chain.headerPages
            while position < layout.pagesEnd {
                let page = try OggPage.read(input, at: position)
                Self.copy(page, headerPages: codecHeaders, to: &out)
                position = page.end
            }
            Self.copyTail(layout, keepsTrailer: keepsTrailer, plan: plan, size: input.size, to: &out)
            return CleanResult(method: .remux, ledger: try out.write(from: input, to: output))
        }
        // New header pages of each stream whose comment changes, and how far its later pages' numbers move.
        var headers: [Int64: [[UInt8]]] = [:]
        var deltas: [Int: UInt32] = [:]
        let cleaned = try scan.cleanedEmbeddedFiles(plan)
        for index in rewritten {
            let stream = chain.streams[index]
            if let reason = stream.cannotClean { throw MetascrubError.unsupported(format: Self.format, reason: reason) }
            guard stream.codec != .flac, let comment = stream.comment, let firstHeader = stream.headerPages.first else {
                throw MetascrubError.unsupported(format: Self.format, reason: "rewriting Ogg FLAC metadata packets is not supported yet")
            }
            var packet = stream.commentPrefix + comment.rebuilt(keeps: plan.keeps, cleaned: cleaned)
            if stream.codec == .vorbis { packet.append(1) }
            let second = try OggPage.read(input, at: firstHeader)
            let pages = OggPage.paginate([packet] + stream.packets.dropFirst(), serial: stream.serial, firstSequence: second.sequence)
            headers[firstHeader] = pages
            let delta = UInt32(truncatingIfNeeded: pages.count - stream.headerPages.count)
            if delta != 0 { deltas[index] = delta }
        }
        let headerPages = Set(rewritten.flatMap { chain.streams[$0].headerPages })
        let codecHeaders = chain.headerPages
        var out = OutputPlan()
        var position: Int64 = 0
        while position < layout.pagesEnd {
            let page = try OggPage.read(input, at: position)
            position = page.end
            if let pages = headers[page.offset] {
                for bytes in pages { out.append(bytes) }
            } else if headerPages.contains(page.offset) {
                continue
            } else if let index = chain.stream(of: page), let delta = deltas[index], page.flags & OggPage.beginOfStream == 0 {
                // A later page of a stream whose header page count changed: its sequence number moves, so its CRC.
                let bytes = try input.read(at: page.offset, count: page.headerSize + page.bodySize)
                guard OggPage.crcMatches(bytes) else {
                    throw MetascrubError.malformed(format: Self.format, path: "page #\(page.sequence)", offset: page.offset, reason: "page CRC mismatch")
                }
                out.append(OggPage.serialise(flags: page.flags, granule: page.granule, serial: page.serial,
                                             sequence: page.sequence &+ delta, lacing: page.lacing, body: bytes[page.headerSize...]))
            } else {
                Self.copy(page, headerPages: codecHeaders, to: &out)
            }
        }
        Self.copyTail(layout, keepsTrailer: keepsTrailer, plan: plan, size: input.size, to: &out)
        var result = CleanResult(method: .remux, ledger: try out.write(from: input, to: output))
        if !deltas.isEmpty {
            result.notes.append(Note(.info, code: "ogg-renumbered", "a comment header now takes a different number of pages; later pages of its stream were renumbered and their CRCs recomputed"))
        }
        return result
    }

    /// A page copied unchanged: its header is structure; the body of a header page holds codec headers and a
    /// comment whose fields are all kept (structure read field by field), any other body is coded data.
    private static func copy(_ page: OggPage, headerPages: Set<Int64>, to out: inout OutputPlan) {
        out.copy(page.offset..<page.body.lowerBound, because: .structure)
        out.copy(page.body, because: headerPages.contains(page.offset) ? .structure : .codedData)
    }

    /// A cut last page (coded data, compared by the content check) or bytes after the last page the policy keeps.
    private static func copyTail(_ layout: OggLayout, keepsTrailer: Bool, plan: CleanPlan, size: Int64, to out: inout OutputPlan) {
        guard layout.pagesEnd < size else { return }
        if layout.cutPage != nil {
            out.copy(layout.pagesEnd..<size, because: .codedData)
        } else if keepsTrailer, let item = layout.trailerItem {
            out.copy(layout.pagesEnd..<size, because: .keptItem(item))
        }
    }

    public func verifyContent(original: any ByteSource, _ before: OggLayout, cleaned: any ByteSource, _ after: OggLayout, result: CleanResult) throws -> ContentCheck {
        let method = "identification and setup headers of every stream, and every later page's packets, lacing and granule positions byte-identical"
        let a = before.chain.streams, b = after.chain.streams
        guard a.count == b.count else { return ContentCheck(method: method, passed: false, detail: "\(a.count) streams before, \(b.count) after") }
        var identical = IdenticalRanges()
        for (x, y) in zip(a, b) {
            guard x.codec == y.codec, x.link == y.link, x.serial == y.serial, x.packets.dropFirst().elementsEqual(y.packets.dropFirst()),
                  try ByteComparison.equal(original, x.firstPage.body, cleaned, y.firstPage.body, skipping: [], proving: &identical) else {
                return ContentCheck(method: method, passed: false, detail: "codec headers of stream \(x.serial) differ")
            }
        }
        // Every page that is not a header page, in file order: pages of the streams' coded data (and their first pages).
        let skipA = before.chain.headerPages, skipB = after.chain.headerPages
        var p: Int64 = 0, q: Int64 = 0
        while true {
            while p < before.pagesEnd, skipA.contains(p) { p = try OggPage.read(original, at: p).end }
            while q < after.pagesEnd, skipB.contains(q) { q = try OggPage.read(cleaned, at: q).end }
            guard p < before.pagesEnd || q < after.pagesEnd else { break }
            guard p < before.pagesEnd, q < after.pagesEnd else {
                return ContentCheck(method: method, passed: false, detail: "different number of audio pages")
            }
            let x = try OggPage.read(original, at: p), y = try OggPage.read(cleaned, at: q)
            guard x.flags == y.flags, x.granule == y.granule, x.serial == y.serial, x.lacing == y.lacing,
                  try ByteComparison.equal(original, x.body, cleaned, y.body, skipping: [], proving: &identical) else {
                return ContentCheck(method: method, passed: false, detail: "audio page at \(p) differs")
            }
            p = x.end
            q = y.end
        }
        if let cut = before.cutPage {
            guard let cutAfter = after.cutPage, original.size - cut == cleaned.size - cutAfter,
                  try ByteComparison.equal(original, cut..<original.size, cleaned, cutAfter..<cleaned.size, skipping: [],
                                           proving: &identical) else {
                return ContentCheck(method: method, passed: false, detail: "the cut last page at \(cut) differs")
            }
        }
        return ContentCheck(method: method, passed: true, identical: identical)
    }
}
