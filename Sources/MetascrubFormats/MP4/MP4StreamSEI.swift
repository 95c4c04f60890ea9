// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// Encoder and camera user data inside H.264/HEVC samples: x264/x265 option strings and AVCHD MDPM in SEI
/// user_data_unregistered messages. Encoders write them in the first access unit, so the first samples of
/// each track (and of the first fragment) are read; each message becomes an item whose removal overwrites its
/// payload in place with same-length filler, so no sample size or offset changes and decoding is unaffected.
extension MP4Scanner {
    /// How many leading samples of a track are searched.
    static let seiSamplesSearched = 2
    /// Largest SEI NAL unit read into memory.
    static let seiNALLimit = 1 << 20

    mutating func scanStreamSEI() throws {
        for track in layout.tracks {
            guard let lengthSize = track.nalLengthSize else { continue }
            var starts: [(offset: Int64, size: Int64)] = []
            var sample = 0
            for chunk in track.samples.chunks where sample < Self.seiSamplesSearched && track.samples.sizesKnown {
                var at = chunk.offset
                for i in chunk.firstSample..<chunk.firstSample + chunk.sampleCount where sample < Self.seiSamplesSearched {
                    // A cut file: only the part of a sample that is in the file can be read.
                    starts.append((at, min(track.samples.sampleSizes[i], max(0, source.size - at))))
                    at += track.samples.sampleSizes[i]
                    sample += 1
                }
            }
            starts += try firstFragmentSamples(trackID: track.id)
            for (offset, size) in starts {
                try scanSample(at: offset, size: size, lengthSize: lengthSize, hevc: track.isHEVC, track: track.id)
            }
        }
    }

    /// Walks the length-prefixed NAL units of one sample, reading only headers and SEI units.
    mutating func scanSample(at offset: Int64, size: Int64, lengthSize: Int, hevc: Bool, track: UInt32) throws {
        var at = offset
        let end = offset + size
        while at + Int64(lengthSize) + 2 <= end {
            let head = try source.read(at: at, count: lengthSize + 2, format: format, path: "track \(track) sample at \(offset)")
            var length: Int64 = 0
            for b in head.prefix(lengthSize) { length = length << 8 | Int64(b) }
            let nalStart = at + Int64(lengthSize)
            guard length > 0, length <= end - nalStart else { return }
            let type = hevc ? Int(head[lengthSize] >> 1) & 0x3F : Int(head[lengthSize] & 0x1F)
            let isSEI = hevc ? (type == 39 || type == 40) : type == 6
            if isSEI, length <= Int64(Self.seiNALLimit) {
                let nal = try source.read(at: nalStart, count: Int(length), format: format, path: "track \(track) SEI")
                seiItems(nal: nal, nalStart: nalStart, hevc: hevc, track: track)
            }
            at = nalStart + length
        }
    }

    /// Items for the user_data_unregistered messages of one SEI NAL unit. HEVC's two-byte NAL header is
    /// presented to the H.264 SEI reader as a one-byte one: the message syntax is the same.
    mutating func seiItems(nal: [UInt8], nalStart: Int64, hevc: Bool, track: UInt32) {
        let view = hevc ? [UInt8(6)] + nal.dropFirst(2) : nal
        let shift: Int64 = hevc ? 1 : 0
        let codec = hevc ? "hevc" : "h264"
        for message in H264SEI.messages(nal: view) where message.payloadType == H264SEI.userDataUnregistered {
            guard let uuid = message.uuid, !message.isNeutralised else { continue }
            let range = (nalStart + shift + Int64(message.escapedRange.lowerBound))..<(nalStart + shift + Int64(message.escapedRange.upperBound))
            let text = message.payload.dropFirst(16).prefix(40)
            let ascii = String(decoding: text.filter { (0x20...0x7E).contains($0) }, as: UTF8.self)
            let (key, category, what): (String, Category, String)
            if uuid == H264SEI.x264UUID || ascii.hasPrefix("x264") || ascii.hasPrefix("x265") {
                (key, category, what) = ("\(codec):sei/encoder-settings", .software, "encoder option string (\(ascii.prefix(4)))")
            } else if message.isMDPM {
                (key, category, what) = ("\(codec):sei/mdpm", .location, "AVCHD camera data (MDPM: date, GPS, camera)")
            } else {
                (key, category, what) = ("\(codec):sei/user-data", .software, "unregistered user data \(BoxUUID.hex(uuid))")
            }
            let box = Box(type: "sei ", offset: range.lowerBound, size: Int64(range.count), headerSize: 0, sizeForm: .compact,
                          path: "track \(track)/sample SEI")
            guard let filler = H264SEI.neutralised(nal: view, message: message) else {
                found.notes.append(Note(.warning, code: "sei-kept", "an SEI user-data message in track \(track) cannot be overwritten in place; it is kept",
                                  offset: range.lowerBound))
                add(key, category, box, detail: what, value: ascii, unknown: key.hasSuffix("user-data"), edit: MP4Edit.none)
                continue
            }
            layout.seiRanges.append(range)
            add(key, category, box, detail: "\(what), \(message.payloadSize) bytes", value: ascii,
                unknown: key.hasSuffix("user-data"), edit: .patch([(range, filler)]))
        }
    }

    /// Offset and size of the first samples of a track in the first movie fragment that holds it.
    func firstFragmentSamples(trackID: UInt32) throws -> [(offset: Int64, size: Int64)] {
        for (_, moof) in layout.parsedTop.sorted(by: { $0.key < $1.key }) where moof.type == "moof" {
            var previousEnd: Int64?
            for traf in moof.children("traf") {
                guard let tfhd = traf.child("tfhd"), let trun = traf.child("trun") else { continue }
                var h = ByteCursor(try reader.payload(of: tfhd.box), origin: tfhd.box.payloadOffset, format: format, path: tfhd.box.path)
                let (_, flags) = try h.fullBoxHeader()
                let id = try h.u32("track ID")
                var base = flags & 0x20000 != 0 ? moof.box.offset : (previousEnd ?? moof.box.offset)
                if flags & 0x1 != 0 { base = Int64(bitPattern: try h.u64("base data offset")) }
                if flags & 0x2 != 0 { try h.skip(4) }
                if flags & 0x8 != 0 { try h.skip(4) }
                let defaultSize: Int64? = flags & 0x10 != 0 ? Int64(try h.u32("default sample size")) : nil
                var r = ByteCursor(try reader.payload(of: trun.box), origin: trun.box.payloadOffset, format: format, path: trun.box.path)
                let (_, runFlags) = try r.fullBoxHeader()
                let count = Int(try r.u32("sample count"))
                var at = base
                if runFlags & 0x1 != 0 { at = base + Int64(Int32(bitPattern: try r.u32("data offset"))) }
                if runFlags & 0x4 != 0 { try r.skip(4) }
                var out: [(Int64, Int64)] = []
                for _ in 0..<min(count, 1 << 20) {
                    if runFlags & 0x100 != 0 { try r.skip(4) }
                    var size = defaultSize ?? 0
                    if runFlags & 0x200 != 0 { size = Int64(try r.u32("sample size")) }
                    if runFlags & 0x400 != 0 { try r.skip(4) }
                    if runFlags & 0x800 != 0 { try r.skip(4) }
                    if id == trackID, out.count < Self.seiSamplesSearched { out.append((at, size)) }
                    at += size
                }
                previousEnd = at
                if id == trackID { return out.filter { $0.0 >= 0 && $0.1 > 0 && $0.0 + $0.1 <= source.size } }
            }
        }
        return []
    }
}
