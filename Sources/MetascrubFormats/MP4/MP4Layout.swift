// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// One track of the movie: its box, what it carries, and where its samples are.
struct MP4Track: Sendable {
    var id: UInt32
    var node: MovieNode
    var handler: FourCC
    /// Types of the sample entries in `stsd` (`avc1`, `mp4a`, `gpmd`, ...).
    var sampleEntries: [FourCC]
    var samples: SampleTable
    /// `stco`/`co64` box, rewritten when data moves.
    var chunkOffsetBox: Box?
    /// All data references point into this file (a track with external data is never moved).
    var selfContained: Bool
    /// NAL length-field size for H.264/HEVC tracks (from avcC/hvcC), for in-stream SEI.
    var nalLengthSize: Int?
    var isHEVC: Bool
    /// Every sample is a JPEG (a timelapse muxed from camera photos), whose APPn/COM segments are looked into.
    var isMotionJPEG = false
}

/// What cleaning does to the file for one item.
enum MP4Edit {
    /// The box goes (a udta atom, an ilst entry, a uuid box, padding holding old bytes).
    case drop(Box)
    /// Bytes overwritten in place, same length (zeroed times, blank compressor name, neutralised SEI payload).
    case patch([(range: Range<Int64>, bytes: [UInt8])])
    /// The handler box keeps its type and loses its name.
    case handlerName(Box)
    /// The track and its samples go.
    case dropTrack(UInt32)
    /// An XMP packet (uuid or XMP_ box) rebuilt with its kept properties, or removed.
    case xmp(Box, EmbeddedMetadata)
    /// Bytes inside `mdat` no track references, cut out of it.
    case cut([Range<Int64>])
    /// The box's bytes are replaced by rebuilt ones (a data reference table without file names).
    case replace(Box, [UInt8])
    /// Bytes cut out of a sample entry (a box no decoder reads): the entry and `stsd` shrink by them.
    case cutSampleEntry(stsd: Box, entry: Box, cut: Range<Int64>)
    /// Decided by the items inside (a `meta` box whose ilst entries are items of their own).
    case none
}

/// The scanner's parse of an MP4/MOV/M4A/3GP file, handed to the cleaner and the verifier.
public struct MP4Layout: Sendable {
    var format: String
    var top: [Box]
    /// Bytes after the last box (never seen in a valid file; removed as a trailer).
    var trailer: Range<Int64>?
    var moov: MovieNode?
    /// Index of `moov` in `top`.
    var moovIndex: Int?
    /// Top-level boxes parsed as trees because offsets inside them may need rewriting (`moof`, `mfra`, top `meta`).
    var parsedTop: [Int: MovieNode] = [:]
    var tracks: [MP4Track] = []
    /// Per item: what cleaning it means.
    var edits: [Int: MP4Edit] = [:]
    /// Item owning the trailer.
    var trailerItem: Int?
    /// `covr` entries whose picture was looked into as a file of its own (item → the entry's box).
    var covers: [Int: Box] = [:]
    /// Escaped SEI payload ranges of the original that a clean may overwrite (the verifier skips them).
    var seiRanges: [Range<Int64>] = []

    var fragmented: Bool { top.contains { $0.type == "moof" } }

    func track(_ id: UInt32) -> MP4Track? { tracks.first { $0.id == id } }
}
