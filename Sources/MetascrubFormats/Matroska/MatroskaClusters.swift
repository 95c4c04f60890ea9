// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// What lives inside Clusters besides coded frames: subtitle tracks whose text is telemetry (drone and dash-cam
/// SRT/ASS/WebVTT with a position per frame), and elements that are not blocks at all. A telemetry track is one
/// `location` item whose removal voids its TrackEntry, every one of its blocks and its Cue entries in place;
/// an element a Cluster does not define (or a Void with data in it) is an item of its own. No byte moves, so
/// every other Cluster, Cue and SeekHead position stays valid.
extension MatroskaFormat.Scanner {
    /// A text subtitle track: where its entry is, its blocks, and the first samples of its text.
    struct TextTrack {
        var number: UInt64
        var entry: EBMLElement
        var entryNumber: Int
        var codec: String
        var blocks: [Range<Int64>] = []
        var samples: [[UInt8]] = []
        /// Compression the muxer applied to every frame, undone before the text is read.
        var encodings: [MatroskaContentEncoding] = []
        /// Why a frame's text could not be read (encrypted, an unknown compression, a broken zlib stream).
        var unreadable: String?
    }

    enum ClusterID {
        static let timestamp: UInt32 = 0xE7, silentTracks: UInt32 = 0x5854, position: UInt32 = 0xA7, prevSize: UInt32 = 0xAB
        static let encryptedBlock: UInt32 = 0xAF
        static let cuePoint: UInt32 = 0xBB, cueTrackPositions: UInt32 = 0xB7, cueTrack: UInt32 = 0xF7, trackType: UInt32 = 0x83
        /// What a Cluster may hold (RFC 9559 §5.1.3), besides Void and CRC-32.
        static let known: Set<UInt32> = [timestamp, silentTracks, position, prevSize, encryptedBlock,
                                         MatroskaFormat.Scanner.BlockID.simpleBlock, MatroskaFormat.Scanner.BlockID.blockGroup]
    }

    /// Text codecs whose samples are plain text (SRT, SSA/ASS, WebVTT, USF, Kate).
    static func isTextCodec(_ codec: String) -> Bool {
        codec.hasPrefix("S_TEXT/") || codec.hasPrefix("D_WEBVTT") || codec == "S_KATE"
    }

    /// Remembers a text subtitle track (returns true) so its blocks are collected while Clusters are walked.
    mutating func noteTextTrack(_ entry: EBMLElement, entryNumber: Int) throws -> Bool {
        var number: UInt64?, codec = "", encodings: [MatroskaContentEncoding] = []
        for c in try EBML.children(input, of: entry, path: "Tracks/TrackEntry") {
            switch c.id {
            case BlockID.trackNumber: number = try EBML.uint(input, c)
            case BlockID.codecID: codec = String(decoding: try EBML.bytes(input, c, limit: 64).prefix { $0 != 0 }, as: UTF8.self)
            case MatroskaContentEncoding.ID.encodings: encodings = try MatroskaContentEncoding.read(input, c)
            default: break
            }
        }
        guard let number, Self.isTextCodec(codec) else { return false }
        textTracks[number] = TextTrack(number: number, entry: entry, entryNumber: entryNumber, codec: codec, encodings: encodings)
        return true
    }

    /// Every child of a Cluster: its CRC-32, blocks of H.264/HEVC tracks (SEI) and of text tracks (telemetry),
    /// and anything that is neither a block nor Cluster bookkeeping.
    mutating func cluster(_ cluster: EBMLElement) throws {
        var at = cluster.dataOffset
        var first = true
        var unknown = 0
        while at < cluster.end {
            // A Cluster the file cuts short is walked as far as it goes: its last element may be cut too (a
            // subtitle block of a telemetry track is voided all the same; video in it is copied as it is).
            let header: EBMLElement?
            if cluster.cut {
                header = try? EBML.header(input, at: at, limit: cluster.end, path: "Cluster", allowCut: true)
            } else {
                header = try EBML.header(input, at: at, limit: cluster.end, path: "Cluster")
            }
            guard let e = header else { break }
            if first, e.id == MatroskaFormat.ID.crc, e.dataSize == 4 {
                layout.checksums.append((e.data, e.end..<cluster.end))
                layout.clusterCRCs.append(e.data)
            }
            first = false
            switch e.id {
            case BlockID.simpleBlock:
                if layout.inspectsBlocks && !e.cut { try blockSEI(e) }
                try textBlock(e, in: e)
            case BlockID.blockGroup:
                if e.cut {
                    // Its Block comes first; the rest of the group may be missing.
                    if let block = try? EBML.header(input, at: e.dataOffset, limit: e.end, path: "Cluster/BlockGroup", allowCut: true),
                       block.id == BlockID.block { try textBlock(block, in: e) }
                    break
                }
                for c in try EBML.children(input, of: e, path: "Cluster/BlockGroup") where c.id == BlockID.block {
                    if layout.inspectsBlocks { try blockSEI(c) }
                    try textBlock(c, in: e)
                }
            case MatroskaFormat.ID.void:
                if try holdsData(e) {
                    unknown += 1
                    unreferenced(e, location: "Segment/Cluster@\(cluster.offset)/Void", detail: "Void element inside a Cluster holding \(e.dataSize) bytes of data")
                }
            case MatroskaFormat.ID.crc:
                break
            default:
                guard !ClusterID.known.contains(e.id) else { break }
                unknown += 1
                unreferenced(e, location: "Segment/Cluster@\(cluster.offset)/0x\(String(e.id, radix: 16, uppercase: true))",
                             detail: "\(e.dataSize)-byte element a Cluster does not define (no decoder reads it)")
            }
            at = e.end
        }
    }

    /// An element inside a Cluster that no decoder reads: an item of its own, voided in place when it goes.
    mutating func unreferenced(_ e: EBMLElement, location: String, detail: String) {
        let item = add("container:unreferenced", .content, e, location: location, detail: detail, unknown: true, action: .void(e.range))
        layout.holes.append(e.range)
        if e.dataSize > 0, let payload = try? EBML.bytes(input, e, limit: ContentInspector.limit) {
            found.inspect(item, payload: payload, origin: e.dataOffset)
        }
    }

    func holdsData(_ e: EBMLElement) throws -> Bool {
        var at = e.dataOffset
        while at < e.end {
            let n = Int(min(e.end - at, 1 << 20))
            if try input.read(at: at, count: n).contains(where: { $0 != 0 }) { return true }
            at += Int64(n)
        }
        return false
    }

    /// A block of a text track: its range (the BlockGroup's, for a Block) and, for the first ones, its text.
    mutating func textBlock(_ block: EBMLElement, in outer: EBMLElement) throws {
        guard !textTracks.isEmpty, block.dataSize >= 4 else { return }
        let head = try input.read(at: block.dataOffset, count: Int(min(block.dataSize, 12)), format: MatroskaFormat.format, path: "Cluster/Block")
        let length = head[0].leadingZeroBitCount + 1
        guard length <= 8, head.count >= length + 3 else { return }
        var track = UInt64(head[0]) & (0xFF >> UInt64(length))
        for i in 1..<length { track = track << 8 | UInt64(head[i]) }
        guard textTracks[track] != nil else { return }
        textTracks[track]!.blocks.append(outer.range)
        if textTracks[track]!.samples.count < 16 {
            let data = block.dataOffset + Int64(length + 3)
            let encodings = textTracks[track]!.encodings
            if encodings.isEmpty {
                textTracks[track]!.samples.append(try input.read(at: data, count: Int(min(block.end - data, 4096))))
            } else if let text = MatroskaContentEncoding.decode(try input.read(at: data, count: Int(min(block.end - data, 1 << 20))),
                                                                encodings, limit: 4096) {
                textTracks[track]!.samples.append(text)
            } else {
                textTracks[track]!.unreadable = encodings.compactMap {
                    if case .unreadable(let why) = $0 { why } else { nil }
                }.first ?? "a frame that does not inflate"
            }
        }
    }

    /// Cue entries by track: a CuePoint whose every position is one track's, or that track's CueTrackPositions.
    mutating func cues(_ e: EBMLElement) throws {
        let children = try EBML.children(input, of: e, path: "Cues")
        checksum(e, children)
        if let crc = children.first, crc.id == MatroskaFormat.ID.crc { layout.holes.append(crc.data) }
        for point in children where point.id == ClusterID.cuePoint {
            var positions: [(track: UInt64, range: Range<Int64>)] = []
            for p in try EBML.children(input, of: point, path: "Cues/CuePoint") where p.id == ClusterID.cueTrackPositions {
                if let t = try EBML.children(input, of: p, path: "Cues/CuePoint/CueTrackPositions").first(where: { $0.id == ClusterID.cueTrack }) {
                    positions.append((try EBML.uint(input, t), p.range))
                }
            }
            let tracks = Set(positions.map(\.track))
            if tracks.count == 1, let only = tracks.first {
                cueEntries[only, default: []].append(point.range)
            } else {
                for p in positions { cueEntries[p.track, default: []].append(p.range) }
            }
        }
    }

    /// Text tracks whose samples state positions become `location` items (the shared telemetry decision,
    /// `LocationShapes.holdsPosition`, as for MP4 text tracks).
    mutating func finishTextTracks() {
        for track in textTracks.values.sorted(by: { $0.number < $1.number }) {
            let cues = cueEntries[track.number] ?? []
            let item: Int
            if let match = LocationShapes.holdsPosition(track.samples) {
                item = add("matroska:track/telemetry-subtitles", .location, track.entry, location: "Segment/Tracks/TrackEntry#\(track.entryNumber)",
                           detail: "subtitle track \(track.number) (\(track.codec)) whose text holds GPS positions (\(match.kind.what)), \(track.blocks.count) blocks",
                           action: .void(track.entry.range))
            } else if let why = track.unreadable {
                // Text no one can read here may state anything: an unknown item, removed with its blocks as telemetry is.
                item = add("matroska:track/unreadable-text", .content, track.entry, location: "Segment/Tracks/TrackEntry#\(track.entryNumber)",
                           detail: "subtitle track \(track.number) (\(track.codec)) whose frames cannot be read (\(why)), \(track.blocks.count) blocks",
                           unknown: true, action: .void(track.entry.range))
            } else {
                continue
            }
            layout.actions[item, default: []].append(.voidEach(track.blocks + cues))
            layout.holes += track.blocks + cues
        }
    }
}
