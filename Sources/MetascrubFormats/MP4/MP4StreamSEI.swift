// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// Encoder and camera user data inside H.264/HEVC samples: x264/x265 option strings, AVCHD MDPM and the GPS,
/// speed and time dashcams write into SEI user_data_unregistered messages of every access unit; and the APPn/COM
/// segments of every Motion-JPEG sample (a timelapse muxed from camera photos keeps their EXIF). Every sample of
/// every track (in the sample tables and in every movie fragment) is examined, reading only NAL headers and SEI
/// units, or JPEG segment headers; each kind of message becomes one item per track with a count and its first
/// location, and its removal overwrites every payload of that kind in place with same-length filler, so no
/// sample size or offset changes and decoding is unaffected.
extension MP4Scanner {
    /// Sample entries whose samples are whole JPEGs (QuickTime `jpeg`, Motion-JPEG A, Avid, DV-Motion-JPEG).
    static let motionJPEGEntries: Set<FourCC> = ["jpeg", "mjpa", "AVDJ", "dmb1", "MJPG"]
    /// MPEG-4 systems object type of JPEG (ISO/IEC 10918-1) in an `mp4v` entry's `esds`, as ffmpeg writes MJPEG in MP4.
    static let jpegObjectType: UInt8 = 0x6C

    mutating func scanStreamSEI() throws {
        var tally = SampleSEI.Tally()
        for track in layout.tracks {
            let lengthSize = track.nalLengthSize
            guard lengthSize != nil || track.isMotionJPEG else { continue }
            var number = 0
            func scan(_ offset: Int64, _ size: Int64, _ scanner: inout MP4Scanner) throws {
                number += 1
                let location = "track \(track.id) sample \(number)"
                let messages = if let lengthSize {
                    try SampleSEI.messages(scanner.source, at: offset, size: size, lengthSize: lengthSize, hevc: track.isHEVC,
                                           format: scanner.format, path: location)
                } else {
                    try MJPEGFrame.messages(scanner.source, at: offset, size: size, container: "mp4", format: scanner.format, path: location)
                }
                for message in messages {
                    tally.record(message, track: "\(track.id)", location: location) {
                        let box = Box(type: "sei ", offset: message.range.lowerBound, size: Int64(message.range.count), headerSize: 0,
                                      sizeForm: .compact, path: "track \(track.id)/sample \(lengthSize == nil ? "APP" : "SEI")")
                        return scanner.add(message.key, message.category, box, detail: message.what, value: message.text,
                                           unknown: message.unknown, edit: MP4Edit.none)
                    }
                }
            }
            if track.samples.sizesKnown {
                let sizes = track.samples.sampleSizes
                for chunk in track.samples.chunks {
                    var at = chunk.offset
                    for i in chunk.firstSample..<min(chunk.firstSample + chunk.sampleCount, sizes.count) {
                        // A cut file: only the part of a sample that is in the file can be read.
                        try scan(at, min(sizes[i], max(0, source.size - at)), &self)
                        at += sizes[i]
                    }
                }
            }
            for (offset, size) in try fragmentSamples(trackID: track.id) { try scan(offset, size, &self) }
        }
        for kind in tally.kinds.values {
            found.items[kind.item].detail = tally.detail(kind)
            if !kind.patches.isEmpty { layout.edits[kind.item] = .patch(kind.patches) }
        }
        layout.seiRanges += tally.ranges
        found.notes += tally.notes
    }

    /// Offset and size of every sample of a track in the movie fragments, in file order.
    func fragmentSamples(trackID: UInt32) throws -> [(offset: Int64, size: Int64)] {
        var all: [(offset: Int64, size: Int64)] = []
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
                    if id == trackID { out.append((at, size)) }
                    at += size
                }
                previousEnd = at
                if id == trackID { all += out.filter { $0.0 >= 0 && $0.1 > 0 && $0.0 + $0.1 <= source.size } }
            }
        }
        return all
    }

    /// Whether a visual sample entry's samples are JPEGs: its type says so, or an `mp4v` entry's `esds` names JPEG.
    static func isMotionJPEG(_ entry: Box, reader: BoxReader) throws -> Bool {
        if motionJPEGEntries.contains(entry.type) { return true }
        guard entry.type == "mp4v", entry.end - entry.payloadOffset > 78 else { return false }
        let children = try reader.boxes(in: (entry.payloadOffset + 78)..<entry.end, parentPath: entry.path, depth: 7)
        guard let esds = children.boxes.first(where: { $0.type == "esds" }) else { return false }
        // Full box header, then ES_Descriptor (tag 3): size, ES_ID, flags and their optional fields; then
        // DecoderConfigDescriptor (tag 4): size, objectTypeIndication.
        let p = try reader.payload(of: esds)
        func descriptor(_ tag: UInt8, at i: Int) -> Int? {
            guard i < p.count, p[i] == tag else { return nil }
            var j = i + 1
            for _ in 0..<4 where j < p.count { j += 1; if p[j - 1] & 0x80 == 0 { break } }
            return j
        }
        guard var i = descriptor(3, at: 4), i + 3 <= p.count else { return false }
        let flags = p[i + 2]
        i += 3
        if flags & 0x80 != 0 { i += 2 }
        if flags & 0x40 != 0, i < p.count { i += 1 + Int(p[i]) }
        if flags & 0x20 != 0 { i += 2 }
        guard let body = descriptor(4, at: i), body < p.count else { return false }
        return p[body] == jpegObjectType
    }
}
