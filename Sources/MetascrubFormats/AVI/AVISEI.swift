// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// SEI user data in every frame of H.264 video in AVI (Annex B byte streams in `##dc` chunks): each kind becomes
/// one item per stream with a count and its first frame, and cleaning overwrites every payload in place with
/// filler of the same length, so no chunk, idx1 or indx entry moves.
extension AVIFormat.Scanner {
    /// Stream handlers and compressions that are H.264.
    static let h264Handlers: Set<String> = ["H264", "h264", "X264", "x264", "avc1", "AVC1", "DAVC", "VSSH"]
    /// How much of a frame is read to find its SEI (they come before the first slice).
    static let seiWindow = 1 << 16

    /// Records whether the stream a `strh`/`strf` describes is H.264 (`strh` handler or `strf` compression).
    mutating func noteStream(_ id: String, at offset: Int64, payload: Int64) throws {
        if id == "strh" {
            layout.streams += 1
        }
        guard payload >= 20, layout.streams > 0 else { return }
        let head = try input.read(at: offset + 8, count: 20, format: AVIFormat.format, path: id)
        let code = String(decoding: head[(id == "strh" ? 4 : 16)..<(id == "strh" ? 8 : 20)], as: UTF8.self)
        let video = id == "strf" || head[0..<4].elementsEqual("vids".utf8)
        if video && Self.h264Handlers.contains(code) { layout.h264Streams.insert(layout.streams - 1) }
        if video && Self.mjpegHandlers.contains(code) { layout.mjpegStreams.insert(layout.streams - 1) }
    }

    /// Walks a movi list (and its rec lists) for the frames of H.264 streams.
    mutating func moviSEI(from start: Int64, to end: Int64, depth: Int) throws {
        guard !layout.h264Streams.isEmpty || !layout.mjpegStreams.isEmpty, depth < 4 else { return }
        var at = start
        while at + 8 <= end {
            let head = try input.read(at: at, count: 8, format: AVIFormat.format, path: "movi")
            let payload = Int64(ByteOrder.little.u32(head, 4))
            let chunkEnd = at + 8 + payload
            // A file cut inside its movi list: the part of the last frame that is there is still searched.
            guard chunkEnd <= end || end == input.size else { return }
            let size = min(payload, end - at - 8)
            if head[0..<4].elementsEqual("LIST".utf8) {
                try moviSEI(from: at + 12, to: min(chunkEnd, end), depth: depth + 1)
            } else if head[2] == UInt8(ascii: "d"), let stream = Int(String(decoding: head[0..<2], as: UTF8.self)) {
                if layout.h264Streams.contains(stream) {
                    layout.frames[stream, default: 0] += 1
                    try frameSEI(at: at + 8, size: size, stream: stream, frame: layout.frames[stream]!)
                } else if layout.mjpegStreams.contains(stream) {
                    layout.frames[stream, default: 0] += 1
                    try frameSegments(at: at + 8, size: size, stream: stream, frame: layout.frames[stream]!)
                }
            }
            at = chunkEnd + (payload & 1)
        }
    }

    /// The SEI NAL units before the first slice of one frame.
    mutating func frameSEI(at offset: Int64, size: Int64, stream: Int, frame: Int) throws {
        let bytes = try input.read(at: offset, count: Int(min(size, Int64(Self.seiWindow))), format: AVIFormat.format, path: "movi frame")
        var starts: [Int] = []
        var zeros = 0
        for (i, b) in bytes.enumerated() {
            if b == 1 && zeros >= 2 { starts.append(i + 1) }
            zeros = b == 0 ? zeros + 1 : 0
        }
        let location = "stream \(stream) frame \(frame)"
        // Moved out and back rather than copied: a copy would duplicate the whole tally on every frame.
        var tally = SampleSEI.Tally()
        swap(&tally, &seiTally)
        defer { swap(&tally, &seiTally) }
        for (k, s) in starts.enumerated() where s < bytes.count {
            let type = Int(bytes[s] & 0x1F)
            if (1...5).contains(type) { break }
            guard type == 6 else { continue }
            // The NAL ends at the next start code (its zeros belong to the byte stream) or at the frame's end.
            guard k + 1 < starts.count || Int64(bytes.count) == size else {
                found.notes.append(Note(.warning, code: "sei-too-large", "an SEI NAL unit in \(location) runs past the bytes inspected", offset: offset + Int64(s)))
                continue
            }
            var nalEnd = k + 1 < starts.count ? starts[k + 1] - 3 : bytes.count
            while nalEnd > s && bytes[nalEnd - 1] == 0 { nalEnd -= 1 }
            for message in SampleSEI.userData(nal: Array(bytes[s..<nalEnd]), nalStart: offset + Int64(s), hevc: false) {
                tally.record(message, track: "\(stream)", location: location) {
                    add(message.key, message.category, message.range, location: "RIFF/LIST-movi/\(String(format: "%02d", stream))dc/SEI",
                        detail: message.what, value: message.text, unknown: message.unknown, action: .patch([]))
                }
            }
        }
    }

    /// Each kind's item gets its count, first location and every replacement.
    mutating func finishSEI() {
        for kind in seiTally.kinds.values {
            found.items[kind.item].detail = seiTally.detail(kind)
            layout.actions[kind.item] = [.patch(kind.patches)]
        }
        layout.seiRanges = (layout.seiRanges + seiTally.ranges).sorted { $0.lowerBound < $1.lowerBound }
        found.notes += seiTally.notes
    }
}
