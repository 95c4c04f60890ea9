// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// One Ogg page (RFC 3533 §6): a 27-byte header, a lacing table of up to 255 segment sizes, and the body.
struct OggPage {
    static let continued: UInt8 = 0x01
    static let beginOfStream: UInt8 = 0x02
    static let endOfStream: UInt8 = 0x04
    /// Granule position of a page on which no packet ends.
    static let noGranule: UInt64 = .max

    var offset: Int64
    var flags: UInt8
    var granule: UInt64
    var serial: UInt32
    var sequence: UInt32
    var crc: UInt32
    var lacing: [UInt8]

    var headerSize: Int { 27 + lacing.count }
    var bodySize: Int { lacing.reduce(0) { $0 + Int($1) } }
    var end: Int64 { offset + Int64(headerSize + bodySize) }
    var body: Range<Int64> { offset + Int64(headerSize)..<end }

    /// Reads the header at `offset` and checks that the body fits in the file.
    static func read(_ source: any ByteSource, at offset: Int64) throws -> OggPage {
        let fixed = try source.read(at: offset, count: 27, format: "Ogg", path: "page header")
        guard fixed[0..<4].elementsEqual("OggS".utf8) else {
            throw MetascrubError.malformed(format: "Ogg", path: "page", offset: offset, reason: "no OggS capture pattern")
        }
        guard fixed[4] == 0 else {
            throw MetascrubError.malformed(format: "Ogg", path: "page", offset: offset, reason: "unknown page version \(fixed[4])")
        }
        let lacing = try source.read(at: offset + 27, count: Int(fixed[26]), format: "Ogg", path: "page lacing table")
        var granule: UInt64 = 0
        for i in (6..<14).reversed() { granule = granule << 8 | UInt64(fixed[i]) }
        let page = OggPage(offset: offset, flags: fixed[5], granule: granule, serial: ByteOrder.little.u32(fixed, 14),
                           sequence: ByteOrder.little.u32(fixed, 18), crc: ByteOrder.little.u32(fixed, 22), lacing: lacing)
        guard page.end <= source.size else {
            throw MetascrubError.truncated(format: "Ogg", path: "page #\(page.sequence)", offset: offset, needed: page.end - source.size)
        }
        return page
    }

    /// The page's bytes with a new sequence number and the CRC recomputed over them.
    static func serialise(flags: UInt8, granule: UInt64, serial: UInt32, sequence: UInt32, lacing: [UInt8], body: ArraySlice<UInt8>) -> [UInt8] {
        var out = Array("OggS".utf8) + [0, flags]
        for i in 0..<8 { out.append(UInt8((granule >> (8 * UInt64(i))) & 0xFF)) }
        out += ByteOrder.little.bytes(serial) + ByteOrder.little.bytes(sequence) + [0, 0, 0, 0, UInt8(lacing.count)] + lacing
        out += body
        let crc = crc32(out[...])
        out.replaceSubrange(22..<26, with: ByteOrder.little.bytes(crc))
        return out
    }

    /// Ogg's CRC-32: polynomial 0x04C11DB7, not reflected, initial value 0, no final XOR.
    static let table: [UInt32] = (0..<256).map { i in
        var r = UInt32(i) << 24
        for _ in 0..<8 { r = r & 0x8000_0000 != 0 ? (r << 1) ^ 0x04C1_1DB7 : r << 1 }
        return r
    }

    static func crc32(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var crc: UInt32 = 0
        for b in bytes { crc = (crc << 8) ^ table[Int((crc >> 24) ^ UInt32(b))] }
        return crc
    }

    /// Whether the stored CRC matches the page's bytes (`bytes` is the whole page, CRC field included).
    static func crcMatches(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= 27 else { return false }
        var zeroed = bytes
        zeroed.replaceSubrange(22..<26, with: [0, 0, 0, 0])
        return crc32(zeroed[...]) == ByteOrder.little.u32(bytes, 22)
    }

    /// Splits packets into pages (at most 255 lacing values each). Header pages carry granule 0 where a packet
    /// ends and -1 where none does, as libogg writes them.
    static func paginate(_ packets: [[UInt8]], serial: UInt32, firstSequence: UInt32) -> [[UInt8]] {
        var pages: [[UInt8]] = []
        var lacing: [UInt8] = []
        var body: [UInt8] = []
        var continued = false
        var packetEnded = false
        var nextContinued = false
        func flush() {
            guard !lacing.isEmpty else { return }
            pages.append(serialise(flags: continued ? OggPage.continued : 0, granule: packetEnded ? 0 : noGranule, serial: serial,
                                   sequence: firstSequence &+ UInt32(pages.count), lacing: lacing, body: body[...]))
            lacing = []
            body = []
            packetEnded = false
            continued = nextContinued
        }
        for packet in packets {
            var at = 0
            while true {
                let n = min(255, packet.count - at)
                lacing.append(UInt8(n))
                body += packet[at..<at + n]
                at += n
                let done = n < 255
                if done { packetEnded = true }
                if lacing.count == 255 {
                    nextContinued = !done
                    flush()
                    nextContinued = false
                }
                if done { break }
            }
        }
        // The last header packet finishes its page, so audio starts on a fresh one.
        flush()
        return pages
    }
}
