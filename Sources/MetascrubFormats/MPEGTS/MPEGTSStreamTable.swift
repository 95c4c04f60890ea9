// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// The elementary streams a PMT declares that no player shows: KLV (MISB ST 0601 UAS telemetry with platform and
/// sensor positions), timed ID3 and other metadata PES, and private data without an audio, subtitle or teletext
/// descriptor. They are removed by turning each of their packets into a null packet (PID 0x1FFF) and leaving their
/// entry out of every PMT, so no other packet moves and the multiplex keeps its timing.
enum MPEGTSStreamTable {
    struct DataStream {
        var name: String
        var category: Category
        var unknown: Bool
    }

    static let nullPID = 0x1FFF

    /// The stream types players decode: video, audio and subtitles (ISO 13818-1, ATSC A/53, Blu-ray, DVB).
    private static let media: Set<UInt8> = [
        0x01, 0x02, 0x03, 0x04, 0x0F, 0x10, 0x11, 0x1B, 0x1C, 0x20, 0x24, 0x25, 0x42, 0xD1, 0xEA,
        0x80, 0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x8A, 0x90, 0x91, 0x92, 0xA1, 0xA2,
    ]
    /// Descriptors that make a private (0x06) stream audio, subtitles or teletext.
    private static let mediaDescriptors: Set<UInt8> = [0x46, 0x56, 0x59, 0x6A, 0x7A, 0x7B, 0x7C, 0x7F]
    private static let mediaRegistrations: Set<String> = ["AC-3", "EAC3", "DTS1", "DTS2", "DTS3", "Opus", "HEVC", "BSSD", "VC-1", "drac", "AV01"]

    /// What a stream of `type` with these ES descriptors holds when it is not media, nil when a player shows it.
    static func dataStream(type: UInt8, descriptors: ArraySlice<UInt8>) -> DataStream? {
        let registration = registrationID(descriptors)
        if registration == "KLVA" {
            return DataStream(name: "KLV metadata (UAS telemetry: platform and sensor positions, times, mission ids)",
                              category: .location, unknown: false)
        }
        if registration == "ID3 " {
            return DataStream(name: "timed ID3 metadata", category: .content, unknown: false)
        }
        if media.contains(type) { return nil }
        if type == 0x06 {
            if registration.map(mediaRegistrations.contains) == true { return nil }
            if tags(descriptors).contains(where: mediaDescriptors.contains) { return nil }
        }
        if type == 0x15 {
            return DataStream(name: "metadata carried in PES packets", category: .location, unknown: true)
        }
        return DataStream(name: "private data stream (type 0x\(String(type, radix: 16)))", category: .content, unknown: true)
    }

    private static func tags(_ d: ArraySlice<UInt8>) -> [UInt8] {
        var out: [UInt8] = [], i = d.startIndex
        while i + 2 <= d.endIndex {
            out.append(d[i])
            i += 2 + Int(d[i + 1])
        }
        return out
    }

    private static func registrationID(_ d: ArraySlice<UInt8>) -> String? {
        var i = d.startIndex
        while i + 2 <= d.endIndex {
            let len = Int(d[i + 1])
            if d[i] == 0x05, len >= 4, i + 6 <= d.endIndex {
                return String(decoding: d[(i + 2)..<(i + 6)], as: UTF8.self)
            }
            i += 2 + len
        }
        return nil
    }

    /// Descriptors of a loop: tag and byte range (a descriptor running past the loop ends it).
    static func descriptors(_ loop: ArraySlice<UInt8>) -> [(tag: UInt8, range: Range<Int>)] {
        var out: [(tag: UInt8, range: Range<Int>)] = []
        var i = loop.startIndex
        while i + 2 <= loop.endIndex, i + 2 + Int(loop[i + 1]) <= loop.endIndex {
            out.append((loop[i], i..<i + 2 + Int(loop[i + 1])))
            i += 2 + Int(loop[i + 1])
        }
        return out
    }

    /// User-private program descriptors no broadcast standard a player follows defines (ATSC and SCTE tags
    /// are read by players; the rest is a recorder's own data).
    static func isStrange(_ tag: UInt8) -> Bool {
        tag >= 0x80 && tag != 0xFF && !(0x80...0x8A).contains(tag) && !(0xA0...0xAD).contains(tag)
    }

    /// A null packet of the same size: what a multiplexer writes to keep its bit rate.
    static let nullPacket: [UInt8] = [0x47, 0x1F, 0xFF, 0x10] + [UInt8](repeating: 0xFF, count: 184)

    /// The 188-byte packet holding a whole PMT section that starts at `sectionStart` with the entries of `pids`
    /// left out, its CRC recomputed and the freed bytes stuffed with 0xFF; nil when it holds none of them.
    static func pmt(_ packet: [UInt8], sectionStart: Int, removing pids: Set<Int>, strangeDescriptors: Bool = false) -> [UInt8]? {
        let s = sectionStart
        let length = Int(packet[s + 1] & 0x0F) << 8 | Int(packet[s + 2])
        let crcAt = s + 3 + length - 4
        guard s + 12 <= crcAt, crcAt + 4 <= packet.count else { return nil }
        let infoEnd = min(s + 12 + (Int(packet[s + 10] & 0x0F) << 8 | Int(packet[s + 11])), crcAt)
        var i = infoEnd
        var section = Array(packet[s..<s + 12])
        var dropped = false
        var info: [UInt8] = []
        for d in descriptors(packet[s + 12..<infoEnd]) {
            if strangeDescriptors && isStrange(d.tag) { dropped = true } else { info += packet[d.range] }
        }
        section[10] = section[10] & 0xF0 | UInt8(info.count >> 8)
        section[11] = UInt8(info.count & 0xFF)
        section += info
        while i + 5 <= crcAt {
            let pid = Int(packet[i + 1] & 0x1F) << 8 | Int(packet[i + 2])
            let next = min(i + 5 + (Int(packet[i + 3] & 0x0F) << 8 | Int(packet[i + 4])), crcAt)
            if pids.contains(pid) { dropped = true } else { section += packet[i..<next] }
            i = next
        }
        guard dropped else { return nil }
        let newLength = section.count - 3 + 4
        section[1] = section[1] & 0xF0 | UInt8(newLength >> 8)
        section[2] = UInt8(newLength & 0xFF)
        let crc = CRC32.mpeg(section[...])
        section += [UInt8(crc >> 24), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc & 0xFF)]
        var out = Array(packet[..<s]) + section
        out += [UInt8](repeating: 0xFF, count: packet.count - out.count)
        return out
    }
}
