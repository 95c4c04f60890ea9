// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// The marker segments of a JPEG 2000 codestream (ISO/IEC 15444-1 Annex A) that matter for cleaning: its COM
/// segments, in the main header and in tile-part headers, and the tile-parts whose lengths (`Psot`) must shrink by
/// the comments removed from them. Coded data (after each SOD) is never read: tile-parts are hopped by `Psot`.
public struct J2KCodestream: Sendable, Equatable {
    public struct Comment: Sendable, Equatable {
        /// The whole segment, marker included (file offsets).
        var range: Range<Int64>
        /// Index into `tileParts`, or nil for the main header.
        var tilePart: Int?
        /// Rcom: 1 Latin-1 text, 0 binary.
        var registration: UInt16
    }

    public struct TilePart: Sendable, Equatable {
        /// Offset of the SOT marker.
        var offset: Int64
        /// Psot as written: 0 means "to the EOC marker".
        var psot: UInt32
        var end: Int64
        /// File offset of the 4-byte Psot field.
        var psotField: Int64 { offset + 6 }
    }

    var range: Range<Int64>
    var comments: [Comment] = []
    var tileParts: [TilePart] = []
    /// A TLM segment lists tile-part lengths; a tile-part comment is only removed when there is none to rewrite.
    var hasTileLengthMarker = false
    /// Bytes after the EOC marker that are still inside the codestream's range.
    var trailing: Range<Int64>?

    static let soc: UInt16 = 0xFF4F, siz: UInt16 = 0xFF51, com: UInt16 = 0xFF64, tlm: UInt16 = 0xFF55
    static let sot: UInt16 = 0xFF90, sod: UInt16 = 0xFF93, eoc: UInt16 = 0xFFD9
    static let maxSegments = 1 << 16
    static let maxTileParts = 1 << 20

    /// Parses the codestream in `range` of `source`; `path` names it in errors ("jp2c", "codestream").
    static func parse(_ source: any ByteSource, _ range: Range<Int64>, path: String) throws -> J2KCodestream {
        var stream = J2KCodestream(range: range)
        func fail(_ at: Int64, _ reason: String) -> MetascrubError {
            .malformed(format: "JPEG 2000", path: path, offset: at, reason: reason)
        }
        func u16(_ at: Int64) throws -> UInt16 {
            guard at + 2 <= range.upperBound else {
                throw MetascrubError.truncated(format: "JPEG 2000", path: path, offset: at,
                    needed: at + 2 - range.upperBound)
            }
            return UInt16(BigEndian.u16(try source.read(at: at, count: 2, format: "JPEG 2000", path: path), 0))
        }
        guard try u16(range.lowerBound) == soc, try u16(range.lowerBound + 2) == siz else {
            throw fail(range.lowerBound, "the codestream does not start with SOC and SIZ")
        }
        // Header segments from `at` up to SOT (main header) or SOD (tile-part header, which must end inside its
        // tile-part, `limit`); returns where that marker is.
        func segments(from start: Int64, tilePart: Int?, until stop: UInt16, limit: Int64) throws -> Int64 {
            var at = start
            for _ in 0..<maxSegments {
                guard at + 2 <= limit else { throw fail(at, "header runs past its tile-part") }
                let marker = try u16(at)
                if marker == stop { return at }
                guard marker >= 0xFF01 else { throw fail(at, "0x\(String(marker, radix: 16)) is not a marker") }
                let length = Int64(try u16(at + 2))
                guard length >= 2, at + 2 + length <= limit else { throw fail(at,
                    "marker segment length \(length) out of range") }
                if marker == com {
                    let rcom = length >= 4 ? try u16(at + 4) : 0
                    stream.comments.append(Comment(range: at..<(at + 2 + length), tilePart: tilePart,
                        registration: rcom))
                } else if marker == tlm {
                    stream.hasTileLengthMarker = true
                }
                at += 2 + length
            }
            throw MetascrubError.limitExceeded(format: "JPEG 2000", path: path, offset: start,
                limit: "\(maxSegments) marker segments")
        }
        var at = try segments(from: range.lowerBound + 2, tilePart: nil, until: sot, limit: range.upperBound)
        while try u16(at) == sot {
            guard stream.tileParts.count < maxTileParts else {
                throw MetascrubError.limitExceeded(format: "JPEG 2000", path: path, offset: at,
                    limit: "\(maxTileParts) tile-parts")
            }
            guard try u16(at + 2) == 10, at + 12 <= range.upperBound else { throw fail(at,
                "SOT segment is not 10 bytes") }
            let field = try source.read(at: at + 6, count: 4, format: "JPEG 2000", path: path)
            let psot = UInt32(BigEndian.u32(field, 0))
            let end: Int64
            if psot == 0 {
                // The last tile-part runs to the EOC marker that closes the codestream.
                guard try u16(range.upperBound - 2) == eoc else { throw fail(at,
                    "tile-part of unknown length without EOC at the end") }
                end = range.upperBound - 2
            } else {
                guard Int64(psot) >= 14, at + Int64(psot) <= range.upperBound else { throw fail(at,
                    "tile-part length \(psot) out of range") }
                end = at + Int64(psot)
            }
            stream.tileParts.append(TilePart(offset: at, psot: psot, end: end))
            _ = try segments(from: at + 12, tilePart: stream.tileParts.count - 1, until: sod, limit: end)
            at = end
            if at + 2 > range.upperBound { break }
        }
        guard at + 2 <= range.upperBound, try u16(at) == eoc else {
            throw fail(at, "no EOC marker after the last tile-part")
        }
        if at + 2 < range.upperBound { stream.trailing = (at + 2)..<range.upperBound }
        return stream
    }

    /// The cleaned codestream: every byte copied except the removed comments (and `trailing` unless kept), with
    /// each tile-part's Psot reduced by what was removed from it.
    func plan(removing removed: Set<Int>, keepTrailing: Bool) -> OutputPlan {
        var shrink: [Int: Int64] = [:]
        var cuts: [Range<Int64>] = []
        for (i, comment) in comments.enumerated() where removed.contains(i) {
            cuts.append(comment.range)
            if let t = comment.tilePart { shrink[t, default: 0] += Int64(comment.range.count) }
        }
        if !keepTrailing, let trailing { cuts.append(trailing) }
        var patches: [(at: Int64, bytes: [UInt8])] = []
        for (t, n) in shrink where tileParts[t].psot != 0 {
            let psot = tileParts[t].psot - UInt32(n)
            patches.append((tileParts[t].psotField, [UInt8(psot >> 24), UInt8(psot >> 16 & 0xFF),
                UInt8(psot >> 8 & 0xFF), UInt8(psot & 0xFF)]))
        }
        var out = OutputPlan()
        var at = range.lowerBound
        let edits = (cuts.map { ($0, [UInt8]()) } + patches.map { ($0.at..<($0.at + 4),
            $0.bytes) }).sorted { $0.0.lowerBound < $1.0.lowerBound }
        for (cut, bytes) in edits {
            if cut.lowerBound > at { out.copy(at..<cut.lowerBound, coded: codedRanges, otherwise: .structure) }
            out.append(bytes)
            at = cut.upperBound
        }
        if at < range.upperBound { out.copy(at..<range.upperBound, coded: codedRanges, otherwise: .structure) }
        return out
    }

    /// The byte ranges a decoder reads: everything but the comments, the Psot fields and the trailing bytes.
    var codedRanges: [Range<Int64>] {
        var holes = comments.map(\.range) + tileParts.map { $0.psotField..<($0.psotField + 4) }
        if let trailing { holes.append(trailing) }
        return ByteSplice.subtract([range], ByteSplice.union(holes))
    }
}
