// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// The boxes a track's structure is allowed to hold. A player reads these; any other box under `trak`, `mdia`,
/// `minf`, `dinf` or `stbl`, or inside a sample entry after its fields, is a stranger's bytes: an `unknown` item.
enum MP4TrackStructure {
    static let known: [FourCC: Set<FourCC>] = [
        "trak": ["tkhd", "tref", "trgr", "edts", "mdia", "udta", "meta", "uuid", "load", "imap", "clip", "matt", "kmat",
                 "txas", "tapt", "ttyp"],
        "mdia": ["mdhd", "hdlr", "minf", "elng", "udta", "meta", "imap"],
        "minf": ["vmhd", "smhd", "hmhd", "nmhd", "sthd", "gmhd", "hdlr", "dinf", "stbl"],
        "dinf": ["dref"],
        "edts": ["elst"],
        "stbl": ["stsd", "stts", "ctts", "cslg", "stsc", "stsz", "stz2", "stco", "co64", "stss", "stsh", "padb", "stdp",
                 "sdtp", "sbgp", "sgpd", "subs", "saiz", "saio", "stps"],
    ]

    /// Boxes a decoder or player reads inside a visual or audio sample entry: codec configuration, colour, aspect,
    /// channel layout, protection and spatial-audio/video descriptions.
    static let sampleEntryChildren: Set<FourCC> = [
        "avcC", "hvcC", "lhvC", "av1C", "vpcC", "vvcC", "dvcC", "dvvC", "dvwC", "esds", "dOps", "dfLa", "alac", "dac3",
        "dec3", "dac4", "damr", "d263", "dmlp", "ddts", "udts", "mhaC", "pcmC", "chnl", "srat", "btrt", "pasp", "colr",
        "clap", "fiel", "gama", "chan", "wave", "SA3D", "sv3d", "st3d", "mdcv", "clli", "CoLL", "SmDm", "amve", "ccst",
        "sinf", "glbl", "m4ds", "enda", "frma", "jpgC", "vexu", "hfov", "ACLR", "APRG", "ARES", "AORD", "sgbt", "dvh1",
    ]

    /// Brands a reader knows (ISO, 3GPP, Apple, CMAF, codecs). Another brand in `ftyp` is four free bytes.
    static let brands: Set<FourCC> = [
        "isom", "iso2", "iso3", "iso4", "iso5", "iso6", "iso7", "iso8", "iso9", "avc1", "hvc1", "hev1", "av01", "mp41",
        "mp42", "mp71", "M4A ", "M4B ", "M4P ", "M4V ", "M4VH", "M4VP", "F4V ", "F4P ", "F4A ", "F4B ", "qt  ", "3gp4",
        "3gp5", "3gp6", "3gp7", "3gp8", "3gp9", "3g2a", "3g2b", "3g2c", "3ge6", "3ge7", "3gg6", "3gs7", "dash", "msdh",
        "msix", "cmfc", "cmfs", "cmff", "cmfl", "cmf2", "mif1", "msf1", "heic", "MSNV", "NDAS", "mmp4", "XAVC", "caqv",
        "dby1", "opus", "Opus", "crx ", "mp4a", "mp4v", "aid3", "dsms", "isml", "piff", "avc3", "hvc2", "hvc3", "vvc1",
        "ma1b", "ma1a", "CAEP", "ROSS", "iphn", "JVC ", "KDDI", "MSNV", "nvr1", "odcf", "opf2", "sdv ", "mjp2", "mj2s",
    ]

    /// Where the boxes of a sample entry begin: after the visual fields, or the audio fields of its sound
    /// description version (QuickTime versions 1 and 2 add fields); nil for entries of other kinds.
    static func childrenStart(handler: FourCC, body: ArraySlice<UInt8>) -> Int? {
        let b = Array(body)
        switch handler {
        case "vide": return b.count >= 78 ? 78 : nil
        case "soun":
            guard b.count >= 28 else { return nil }
            switch BigEndian.u16(b, 8) {
            case 0: return 28
            case 1: return b.count >= 44 ? 44 : nil
            case 2: return b.count >= 64 ? 64 : nil
            default: return nil
            }
        default: return nil
        }
    }
}

extension MP4Scanner {
    /// Boxes under the track's containers that no player reads, and padding holding old bytes there.
    mutating func scanTrackStructure(_ node: MovieNode, track: UInt32) throws {
        guard let allowed = MP4TrackStructure.known[node.type] else { return }
        for child in node.children {
            if ["free", "skip", "wide"].contains(child.type) {
                try scanPadding(child.box)
            } else if !allowed.contains(child.type) {
                add("mp4:box/\(child.type)", .content, child.box,
                    detail: "box no player reads in \(node.type) of track \(track), \(child.box.size) bytes",
                    unknown: true, edit: .drop(child.box))
            } else {
                try scanTrackStructure(child, track: track)
            }
        }
    }

    /// Boxes after a sample entry's fields that no decoder reads: cut out of the entry.
    mutating func scanSampleEntryBoxes(stsd: Box, entry: Box, body: ArraySlice<UInt8>, handler: FourCC,
                                       track: UInt32) throws {
        guard let start = MP4TrackStructure.childrenStart(handler: handler, body: body) else { return }
        let children = (entry.payloadOffset + Int64(start))..<entry.end
        let listing = try reader.boxes(in: children, parentPath: entry.path, depth: 7)
        for child in listing.boxes where !MP4TrackStructure.sampleEntryChildren.contains(child.type) {
            add("mp4:sample-entry/\(child.type)", .content, child,
                detail: "box no decoder reads in the \(entry.type) sample entry of track \(track), \(child.size) bytes",
                unknown: true, edit: .cutSampleEntry(stsd: stsd, entry: entry, cut: child.range))
        }
        // QuickTime ends a sample entry's boxes with four zero bytes: zeros are padding, anything else is not.
        guard let leftover = listing.leftover, !leftover.isEmpty else { return }
        let holdsData = try leftover.count > reader.limits.maxPayloadRead
            || source.read(at: leftover.lowerBound, count: leftover.count, format: format, path: entry.path)
                .contains { $0 != 0 }
        if holdsData {
            let box = Box(type: entry.type, offset: leftover.lowerBound, size: Int64(leftover.count), headerSize: 0,
                          sizeForm: .compact, path: entry.path)
            add("mp4:sample-entry-slack", .content, box,
                detail: "\(leftover.count) bytes after the last box of the \(entry.type) sample entry of track \(track)",
                unknown: true, edit: .cutSampleEntry(stsd: stsd, entry: entry, cut: leftover))
        }
    }

    /// `ftyp` brands no reader knows: overwritten with the major brand, so nothing after `ftyp` moves.
    mutating func scanBrands(_ box: Box) throws {
        let payload = try reader.payload(of: box)
        guard payload.count >= 8 else { return }
        let major = Array(payload[0..<4])
        var fixes: [(range: Range<Int64>, bytes: [UInt8])] = []
        for at in stride(from: 8, to: payload.count - 3, by: 4) {
            let brand = FourCC(bytes: payload[at..<at + 4])
            // Zero brands are padding iTunes writes.
            let bytes = Array(payload[at..<at + 4])
            if !MP4TrackStructure.brands.contains(brand), bytes != major, bytes.contains(where: { $0 != 0 }) {
                let offset = box.payloadOffset + Int64(at)
                fixes.append((offset..<offset + 4, major))
            }
        }
        let tail = (payload.count - 8) % 4
        if tail > 0 {
            let offset = box.end - Int64(tail)
            fixes.append((offset..<box.end, Array(repeating: 0, count: tail)))
        }
        // One item per run of adjacent unknown brands, covering just their bytes (what the proof looks for).
        var runs: [[(range: Range<Int64>, bytes: [UInt8])]] = []
        for fix in fixes {
            if let last = runs.last?.last, last.range.upperBound == fix.range.lowerBound {
                runs[runs.count - 1].append(fix)
            } else {
                runs.append([fix])
            }
        }
        for run in runs {
            let range = run[0].range.lowerBound..<run[run.count - 1].range.upperBound
            let bytes = Box(type: box.type, offset: range.lowerBound, size: Int64(range.count), headerSize: 0,
                            sizeForm: .compact, path: box.path)
            add("mp4:ftyp-brands", .content, bytes, detail: "\(range.count) bytes of compatible brands no reader knows",
                unknown: true, edit: .patch(run))
        }
    }

    /// The data reference table, when an entry no sample entry uses names a file: every entry becomes a
    /// self-contained `url ` (the count stays, so the indices the sample entries hold stay valid).
    mutating func scanDataReferences(_ dref: Box, used: Set<Int>, track: UInt32) throws -> Bool {
        let payload = try reader.payload(of: dref)
        guard payload.count >= 8 else { return true }
        let listing = try reader.boxes(in: (dref.payloadOffset + 8)..<dref.end, parentPath: dref.path, depth: 7)
        var usedContained = true, outside = false
        for (index, ref) in listing.boxes.enumerated() {
            let flags = try reader.fullBoxHeader(of: ref).flags
            let contained = flags & 1 != 0 && ref.payloadSize <= 4
            // The self-contained flag says where the samples are; a location string next to it is only a name.
            if flags & 1 == 0 && used.contains(index + 1) { usedContained = false }
            if !contained { outside = true }
        }
        if outside || listing.leftover != nil, usedContained {
            var writer = ByteWriter()
            writer.u32(0)
            writer.u32(UInt32(listing.boxes.count))
            var bytes = writer.bytes
            for _ in listing.boxes { bytes += BoxWriter.box("url ", [0, 0, 0, 1]) }
            // No sample entry uses the entries that name files: nothing reads them.
            add("mp4:data-reference", .identity, dref,
                detail: "data references of track \(track) naming files outside this one",
                unknown: true, edit: .replace(dref, BoxWriter.box("dref", bytes)))
        }
        return usedContained
    }
}
