// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// Where a track's samples are: its chunks (file offset and size) and the sample sizes in each, from
/// `stco`/`co64`, `stsc` and `stsz`/`stz2`. A removed track's chunks are cut from `mdat`; a kept track's chunk
/// offsets are rewritten to where its bytes land, and its samples are compared after cleaning.
struct SampleTable: Sendable {
    struct Chunk: Sendable, Equatable {
        var offset: Int64
        var size: Int64
        /// Index of the chunk's first sample in `sampleSizes`.
        var firstSample: Int
        var sampleCount: Int
        var range: Range<Int64> { offset..<offset + size }
    }

    var chunks: [Chunk] = []
    var sampleSizes: [Int64] = []
    /// The chunk-offset box was `co64`.
    var wide = false
    /// False when `stsz` is empty (files trimmed by tag editors' test suites): chunks are then known by their
    /// offsets only, which is enough to re-point them but not to compare their bytes.
    var sizesKnown = true
    /// Why the sizes and counts could not be trusted (a cut or corrupt file), when they were given up.
    var damage: MetascrubError?

    /// `parseChecked`, tolerating damage when asked: chunks cut by the end of the file keep the part that is
    /// there (`damage` says why); tables that promise more samples than the file can hold (trimmed test
    /// files) give the chunk offsets alone, enough to re-point the chunks, not to compare their bytes. A
    /// malformed chunk-offset box itself is still refused.
    /// `cutSampleData`: where the payload of the file's last box starts when that box is `mdat` (the only
    /// place a cut leaves chunks pointing past the end of the file); nil refuses damage.
    static func parse(stco: Box?, co64: Box?, stsc: Box?, stsz: Box?, stz2: Box?, reader: BoxReader, fileSize: Int64,
                      cutSampleData: Int64?) throws -> SampleTable {
        do {
            return try parseChecked(stco: stco, co64: co64, stsc: stsc, stsz: stsz, stz2: stz2, reader: reader, fileSize: fileSize,
                                    cutSampleData: cutSampleData)
        } catch let error as MetascrubError where cutSampleData != nil {
            guard case .malformed = error, let offsetsBox = co64 ?? stco else { throw error }
            var table = SampleTable()
            table.wide = co64 != nil
            table.sizesKnown = false
            table.damage = error
            table.chunks = try chunkOffsets(offsetsBox, wide: table.wide, reader: reader).map {
                Chunk(offset: $0, size: 0, firstSample: 0, sampleCount: 0)
            }
            return table
        }
    }

    static func chunkOffsets(_ box: Box, wide: Bool, reader: BoxReader) throws -> [Int64] {
        var c = ByteCursor(try reader.payload(of: box), origin: box.payloadOffset, format: reader.format, path: box.path)
        _ = try c.fullBoxHeader()
        let chunkCount = Int(try c.u32("entry count"))
        let width = wide ? 8 : 4
        guard chunkCount <= c.remaining / width else { throw c.malformed("\(chunkCount) chunk offsets do not fit in the box") }
        var offsets: [Int64] = []
        offsets.reserveCapacity(chunkCount)
        for _ in 0..<chunkCount {
            let offset = Int64(bitPattern: try c.uint(size: width, "chunk offset"))
            guard offset >= 0 else { throw c.malformed("chunk offset \(offset) is negative") }
            offsets.append(offset)
        }
        return offsets
    }

    /// Hostile tables must not make us allocate without bound: more samples than bytes in the file is malformed.
    static func parseChecked(stco: Box?, co64: Box?, stsc: Box?, stsz: Box?, stz2: Box?, reader: BoxReader, fileSize: Int64,
                             cutSampleData: Int64? = nil) throws -> SampleTable {
        var table = SampleTable()
        let format = reader.format
        guard let offsetsBox = co64 ?? stco else { return table }
        table.wide = co64 != nil
        let offsets = try chunkOffsets(offsetsBox, wide: table.wide, reader: reader)

        // Sample sizes.
        if let stsz, stsz.payloadSize < 12 {
            table.sizesKnown = false
        } else if let stsz {
            var s = ByteCursor(try reader.payload(of: stsz), origin: stsz.payloadOffset, format: format, path: stsz.path)
            _ = try s.fullBoxHeader()
            let constant = Int64(try s.u32("sample size"))
            let count = Int(try s.u32("sample count"))
            guard Int64(count) <= fileSize else { throw s.malformed("\(count) samples in a \(fileSize)-byte file") }
            if constant != 0 {
                // The samples must fit in the file, which bounds what a hostile count can make us allocate.
                guard Int64(count) <= fileSize / constant else { throw s.malformed("\(count) samples of \(constant) bytes do not fit in the file") }
                table.sampleSizes = Array(repeating: constant, count: count)
            } else {
                guard count <= s.remaining / 4 else { throw s.malformed("\(count) sample sizes do not fit in the box") }
                table.sampleSizes.reserveCapacity(count)
                for _ in 0..<count { table.sampleSizes.append(Int64(try s.u32("sample size"))) }
            }
        } else if let stz2 {
            var s = ByteCursor(try reader.payload(of: stz2), origin: stz2.payloadOffset, format: format, path: stz2.path)
            _ = try s.fullBoxHeader()
            try s.skip(3, "reserved")
            let bits = Int(try s.u8("field size"))
            let count = Int(try s.u32("sample count"))
            guard [4, 8, 16].contains(bits) else { throw s.malformed("stz2 field size \(bits) is not 4, 8 or 16") }
            guard count <= s.remaining * 8 / bits else { throw s.malformed("\(count) sample sizes do not fit in the box") }
            table.sampleSizes.reserveCapacity(count)
            if bits == 4 {
                for i in 0..<count {
                    let byte = s.bytes[s.position + i / 2]
                    table.sampleSizes.append(Int64(i % 2 == 0 ? byte >> 4 : byte & 0xF))
                }
            } else {
                for _ in 0..<count { table.sampleSizes.append(Int64(try s.uint(size: bits / 8, "sample size"))) }
            }
        }

        // Samples per chunk: runs of (first chunk, samples per chunk).
        var runs: [(first: Int, perChunk: Int)] = []
        if let stsc {
            var s = ByteCursor(try reader.payload(of: stsc), origin: stsc.payloadOffset, format: format, path: stsc.path)
            _ = try s.fullBoxHeader()
            let count = Int(try s.u32("entry count"))
            guard count <= s.remaining / 12 else { throw s.malformed("\(count) sample-to-chunk entries do not fit in the box") }
            for _ in 0..<count {
                let first = Int(try s.u32("first chunk"))
                let perChunk = Int(try s.u32("samples per chunk"))
                try s.skip(4, "sample description index")
                guard first >= 1, runs.last.map({ first > $0.first }) ?? true else {
                    throw s.malformed("sample-to-chunk entries are not in increasing chunk order")
                }
                runs.append((first, perChunk))
            }
        }
        var sample = 0
        var run = -1
        table.chunks.reserveCapacity(offsets.count)
        for (index, offset) in offsets.enumerated() {
            let chunkNumber = index + 1
            // The run covering this chunk is the last whose first chunk is ≤ it; runs are sorted, so a pointer walks them.
            while run + 1 < runs.count, runs[run + 1].first <= chunkNumber { run += 1 }
            let perChunk = table.sizesKnown && run >= 0 ? runs[run].perChunk : 0
            guard perChunk <= table.sampleSizes.count - sample else {
                throw MetascrubError.malformed(format: format, path: stsc?.path ?? offsetsBox.path, offset: stsc?.offset ?? offsetsBox.offset,
                                               reason: "chunk \(chunkNumber) claims more samples than the track has")
            }
            let size = table.sampleSizes[sample..<sample + perChunk].reduce(0, +)
            var inFile = size
            guard offset >= 0, size >= 0, offset <= fileSize, size <= fileSize - offset else {
                let error = MetascrubError.malformed(format: format, path: offsetsBox.path, offset: offsetsBox.offset,
                                                     reason: "chunk \(chunkNumber) at \(offset) (\(size) bytes) lies outside the file")
                // A file cut inside its last sample data box: chunks there keep their samples, what is past
                // the end is gone. A chunk pointing anywhere else is a broken index.
                guard let cut = cutSampleData, offset >= cut, size >= 0 else { throw error }
                table.damage = table.damage ?? error
                inFile = max(0, min(size, fileSize - offset))
                table.chunks.append(Chunk(offset: offset, size: inFile, firstSample: sample, sampleCount: perChunk))
                sample += perChunk
                continue
            }
            table.chunks.append(Chunk(offset: offset, size: inFile, firstSample: sample, sampleCount: perChunk))
            sample += perChunk
        }
        return table
    }

    /// The new `stco` (or `co64` when an offset needs 64 bits or the original was `co64`) for `offsets`.
    static func offsetBox(_ offsets: [Int64], preferWide: Bool) -> [UInt8] {
        let wide = preferWide || offsets.contains { $0 > Int64(UInt32.max) }
        var w = ByteWriter()
        w.fullBoxHeader(version: 0, flags: 0)
        w.u32(UInt32(offsets.count))
        for o in offsets {
            if wide { w.u64(UInt64(o)) } else { w.u32(UInt32(o)) }
        }
        return BoxWriter.box(wide ? "co64" : "stco", w.bytes)
    }
}
