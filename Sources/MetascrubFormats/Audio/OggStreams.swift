// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// One logical stream of an Ogg file (RFC 3533): a link of a chain (files joined with `cat`, each beginning its
/// streams again, possibly with the same serial number) holds one or more multiplexed streams (Theora video and
/// Vorbis audio in an `.ogv`). Each stream has its own identification page, header packets (the comment header
/// among them) and page sequence numbers.
struct OggStream {
    enum Codec: String { case vorbis = "Vorbis", opus = "Opus", speex = "Speex", theora = "Theora", flac = "FLAC" }

    /// Link of the chain (0 for the first) and serial number: together they name the stream.
    var link: Int
    var serial: UInt32
    var codec: Codec
    /// The beginning-of-stream page (the identification header, alone on its page).
    var firstPage: OggPage
    /// Header packets after the identification header (the comment packet first), and how many there are.
    var headerCount: Int
    var packets: [[UInt8]] = []
    var partial: [UInt8] = []
    /// Pages holding packets 1..n of the headers.
    var headerPages: [Int64] = []
    var comment: VorbisComment?
    /// Bytes before the comment list in the comment packet.
    var commentPrefix: [UInt8] = []
    var extraItem: Int?
    var blockItems: [Int] = []
    /// Why this stream's headers cannot be rewritten (audio sharing the last header page).
    var cannotClean: String?

    /// Where its comment items say they are: the file's first stream keeps the plain name it always had.
    var location: String

    var headersDone: Bool { packets.count >= headerCount }

    /// The stream an identification packet begins, or an unsupported-codec error.
    init(link: Int, page: OggPage, idPacket: [UInt8], first: Bool) throws {
        func starts(_ p: [UInt8]) -> Bool { idPacket.count >= p.count && idPacket[0..<p.count].elementsEqual(p) }
        if starts([0x01] + Array("vorbis".utf8)) { (codec, headerCount) = (.vorbis, 2) }
        else if starts(Array("OpusHead".utf8)) { (codec, headerCount) = (.opus, 1) }
        else if starts(Array("Speex   ".utf8)) {
            codec = .speex
            headerCount = 1 + (idPacket.count >= 72 ? Int(min(ByteOrder.little.u32(idPacket, 68), 16)) : 0)
        } else if starts([0x80] + Array("theora".utf8)) { (codec, headerCount) = (.theora, 2) }
        else if starts([0x7F] + Array("FLAC".utf8)), idPacket.count >= 9 { (codec, headerCount) = (.flac, BigEndian.u16(idPacket, 7)) }
        else {
            throw MetascrubError.unsupported(format: OggFormat.format,
                                             reason: "an Ogg stream's codec is not one metascrub can clean (Vorbis, Opus, Speex, Theora)")
        }
        guard headerCount > 0 else {
            throw MetascrubError.malformed(format: OggFormat.format, path: "identification header", offset: page.body.lowerBound,
                                           reason: "no comment header announced")
        }
        self.link = link
        serial = page.serial
        firstPage = page
        location = first ? "\(codec.rawValue) comment header" : "link \(link + 1) stream \(page.serial) \(codec.rawValue) comment header"
    }

    /// Adds the packets of one header page (`bytes` is the whole page, its CRC checked).
    mutating func addHeaderPage(_ page: OggPage, bytes: [UInt8]) {
        headerPages.append(page.offset)
        let body = bytes[page.headerSize...]
        var at = body.startIndex
        for (index, lace) in page.lacing.enumerated() {
            partial += body[at..<at + Int(lace)]
            at += Int(lace)
            guard lace < 255 else { continue }
            packets.append(partial)
            partial = []
            if headersDone {
                if index != page.lacing.count - 1 { cannotClean = "the first audio packet shares a page with the last header packet" }
                return
            }
        }
    }

    /// Whether cleaning leaves this stream's header packets as they are.
    func keepsHeaders(_ keeps: (Int) -> Bool) -> Bool {
        (comment?.unchanged(keeps: keeps) ?? true) && (extraItem.map(keeps) ?? true) && blockItems.allSatisfy(keeps)
    }
}

extension OggStreams {
    /// Index of the stream a page belongs to.
    func stream(of page: OggPage) -> Int? {
        let link = linkStarts.lastIndex { $0 <= page.offset } ?? 0
        return streams.firstIndex { $0.link == link && $0.serial == page.serial }
    }
}

/// Every stream of every link, and where each link begins.
struct OggStreams {
    var streams: [OggStream] = []
    var linkStarts: [Int64] = []
    /// Header pages (after the identification page) of every stream.
    var headerPages: Set<Int64> { Set(streams.flatMap(\.headerPages)) }
}
