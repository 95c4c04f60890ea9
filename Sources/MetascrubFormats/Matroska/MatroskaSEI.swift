// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// SEI user data in every block of H.264/HEVC tracks (dashcam GPS, encoder strings), and the APPn/COM segments of
/// every Motion-JPEG block (a timelapse muxed from camera photos keeps their EXIF): each kind becomes one item per
/// track with a count and its first location, and cleaning overwrites every payload in place with filler of the
/// same length, so no block, Cluster or Cue moves. A Cluster's CRC-32 is recomputed when a payload in it changes.
extension MatroskaFormat.Scanner {
    enum BlockID {
        static let simpleBlock: UInt32 = 0xA3, blockGroup: UInt32 = 0xA0, block: UInt32 = 0xA1
        static let trackNumber: UInt32 = 0xD7, codecID: UInt32 = 0x86, codecPrivate: UInt32 = 0x63A2
    }

    /// Remembers an H.264/HEVC track's number and NAL length size (from avcC/hvcC in CodecPrivate).
    mutating func noteVideoTrack(_ entry: EBMLElement) throws {
        var number: UInt64?, codec = "", config: [UInt8] = [], configElement: EBMLElement?
        for c in try EBML.children(input, of: entry, path: "Tracks/TrackEntry") {
            switch c.id {
            case BlockID.trackNumber: number = try EBML.uint(input, c)
            case BlockID.codecID: codec = String(decoding: try EBML.bytes(input, c, limit: 64).prefix { $0 != 0 }, as: UTF8.self)
            case BlockID.codecPrivate:
                config = try EBML.bytes(input, c, limit: SampleSEI.nalLimit)
                configElement = c
            default: break
            }
        }
        guard let number else { return }
        if codec == "V_MJPEG" { layout.jpegTracks.insert(number) }
        if codec == "V_MPEG4/ISO/AVC", config.count > 4 {
            layout.nalTracks[number] = (Int(config[4] & 3) + 1, false)
        } else if codec == "V_MPEGH/ISO/HEVC", config.count > 21, let configElement {
            layout.nalTracks[number] = (Int(config[21] & 3) + 1, true)
            // x265's option string sits in the hvcC record when the encoder wrote global headers.
            let location = "Tracks/TrackEntry (track \(number))/CodecPrivate"
            var tally = SampleSEI.Tally()
            swap(&tally, &seiTally)
            defer { swap(&tally, &seiTally) }
            for message in DecoderConfigSEI.messages(hvcC: config, at: configElement.dataOffset) {
                tally.record(message, track: "\(number)", location: location) {
                    add(message.key, message.category, configElement, location: location, detail: message.what,
                        value: message.text, unknown: message.unknown)
                }
            }
        }
    }

    /// A block's header: track number (a vint), a 16-bit timecode and flags; laced blocks are left alone
    /// (video is never laced in practice).
    mutating func blockSEI(_ block: EBMLElement) throws {
        guard block.dataSize >= 4 else { return }
        let head = try input.read(at: block.dataOffset, count: Int(min(block.dataSize, 12)), format: MatroskaFormat.format, path: "Cluster/Block")
        let length = head[0].leadingZeroBitCount + 1
        guard length <= 8, head.count >= length + 3 else { return }
        var track = UInt64(head[0]) & (0xFF >> UInt64(length))
        for i in 1..<length { track = track << 8 | UInt64(head[i]) }
        let nal = layout.nalTracks[track]
        guard nal != nil || layout.jpegTracks.contains(track), head[length + 2] & 0x06 == 0 else { return }
        let data = block.dataOffset + Int64(length + 3)
        layout.blocks[track, default: 0] += 1
        let location = "track \(track) block \(layout.blocks[track]!)"
        // Moved out and back rather than copied: a copy would duplicate the whole tally on every frame.
        var tally = SampleSEI.Tally()
        swap(&tally, &seiTally)
        defer { swap(&tally, &seiTally) }
        let messages = if let (lengthSize, hevc) = nal {
            try SampleSEI.messages(input, at: data, size: block.end - data, lengthSize: lengthSize, hevc: hevc,
                                   format: MatroskaFormat.format, path: location)
        } else {
            try MJPEGFrame.messages(input, at: data, size: block.end - data, container: "matroska", format: MatroskaFormat.format, path: location)
        }
        for message in messages {
            tally.record(message, track: "\(track)", location: location) {
                add(message.key, message.category, block, location: "Segment/Cluster/Block (track \(track))/\(nal == nil ? "APP" : "SEI")",
                    detail: message.what, value: message.text, unknown: message.unknown)
            }
        }
    }

    /// Each kind's item gets its count, first location and every replacement.
    mutating func finishSEI() {
        for kind in seiTally.kinds.values {
            found.items[kind.item].detail = seiTally.detail(kind)
            if let first = kind.patches.first {
                found.items[kind.item].offset = first.range.lowerBound
                found.items[kind.item].length = Int64(first.range.count)
            }
            if !kind.patches.isEmpty { layout.actions[kind.item, default: []].append(.patch(kind.patches)) }
        }
        layout.seiRanges = seiTally.ranges.sorted { $0.lowerBound < $1.lowerBound }
        found.notes += seiTally.notes
    }
}
