// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubNative

/// Bakes an EXIF orientation into a PNG's samples: inflate, unfilter (and de-interlace), rotate or flip the
/// raw samples, filter and deflate again. Samples are moved, never converted, and every colour chunk stays,
/// so the result decodes to exactly the original's pixels in displayed orientation.
enum PNGOrientation {
    /// Larger images keep their orientation tag instead (memory: the raw image is held twice).
    static let pixelLimit = 1 << 24
    static let rawLimit = 256 << 20
    static let idatChunkSize = 1 << 20

    struct Baked {
        /// The new IHDR chunk and IDAT chunks, complete with CRCs.
        var header: [UInt8]
        var idat: [[UInt8]]
        /// Width and height swapped (orientations 5–8): pHYs must swap too.
        var transposed: Bool
        /// An APNG's fcTL, IDAT and fdAT chunks in order, every frame turned (`APNGOrientation`); nil for a
        /// still PNG.
        var animation: [[UInt8]]?
    }

    /// Why baking was not attempted; the orientation tag is kept.
    struct Refusal: Error { var reason: String }

    /// Why this PNG's orientation cannot be baked, from the header and chunk sizes alone (no decoding), so
    /// scan and clean decide alike; nil when `bake` can do it.
    static func refusal(_ structure: PNGStructure) -> String? {
        let h = structure.header
        guard let channels = h.channels else { return "unknown colour type" }
        let (pixels, overflow) = h.width.multipliedReportingOverflow(by: h.height)
        guard !overflow, pixels <= pixelLimit else { return "\(h.width)×\(h.height) is larger than the \(pixelLimit)-pixel limit for re-encoding" }
        guard (h.width * channels * h.bitDepth + 7) / 8 * h.height <= rawLimit else { return "the raw image is larger than \(rawLimit) bytes" }
        let compressed = structure.chunks.filter { $0.type == "IDAT" || $0.type == "fdAT" }.reduce(0) { $0 + Int($1.length) }
        guard compressed <= rawLimit else { return "the compressed image is larger than \(rawLimit) bytes" }
        return nil
    }

    static func bake(_ source: any ByteSource, _ structure: PNGStructure, orientation: Int) throws -> Baked {
        let h = structure.header
        guard let channels = h.channels else { throw Refusal(reason: "unknown colour type") }
        let bits = channels * h.bitDepth
        guard [1, 2, 4, 8, 16].contains(h.bitDepth), bits <= 64 else {
            throw MetascrubError.malformed(format: "PNG", path: "IHDR", offset: 8, reason: "bit depth \(h.bitDepth) with colour type \(h.colorType)")
        }
        if let refusal = refusal(structure) { throw Refusal(reason: refusal) }
        var compressed: [UInt8] = []
        for chunk in structure.chunks where chunk.type == "IDAT" {
            compressed += try source.read(at: chunk.dataOffset, count: Int(chunk.length))
        }
        let offset = structure.chunks.first { $0.type == "IDAT" }?.offset ?? 8
        let image = try rawSamples(compressed, header: h, path: "IDAT", offset: offset)
        let transposed = orientation >= 5
        let (ow, oh) = transposed ? (h.height, h.width) : (h.width, h.height)
        let idat = split(try orientedStream(image, header: h, orientation: orientation), "IDAT")
        var ihdr = BigEndian.bytes32(ow) + BigEndian.bytes32(oh)
        ihdr += [UInt8(h.bitDepth), UInt8(h.colorType), 0, 0, 0]
        let animation = structure.isAnimated ? try APNGOrientation.bake(source, structure, orientation: orientation) : nil
        return Baked(header: PNGStructure.chunk("IHDR", ihdr), idat: idat, transposed: transposed, animation: animation)
    }

    /// `stream` as chunks of `type` of at most `idatChunkSize` bytes each (`prefix` before each one's data).
    static func split(_ stream: [UInt8], _ type: String, prefix: () -> [UInt8] = { [] }) -> [[UInt8]] {
        var chunks: [[UInt8]] = []
        var at = 0
        repeat {
            let end = min(stream.count, at + idatChunkSize)
            chunks.append(PNGStructure.chunk(type, prefix() + Array(stream[at..<end])))
            at = end
        } while at < stream.count
        return chunks
    }

    /// One image's samples (the size in `h`, which may be an APNG frame's) from its zlib stream, filters
    /// undone and Adam7 passes merged, as packed rows.
    static func rawSamples(_ compressed: [UInt8], header h: PNGStructure.Header, path: String, offset: Int64) throws -> [UInt8] {
        guard let channels = h.channels else { throw Refusal(reason: "unknown colour type") }
        let bits = channels * h.bitDepth
        let passes = h.interlaced ? adam7 : [(0, 0, 1, 1)]
        let expected = passes.reduce(0) { sum, p in
            let (w, ht) = passSize(p, h.width, h.height)
            return w == 0 || ht == 0 ? sum : sum + ht * (1 + (w * bits + 7) / 8)
        }
        let filtered: [UInt8]
        do {
            filtered = try Zlib.inflate(compressed, limit: expected)
        } catch {
            throw MetascrubError.malformed(format: "PNG", path: path, offset: offset,
                                           reason: "image data does not inflate to the size announced (\(error))")
        }
        guard filtered.count == expected else {
            throw MetascrubError.malformed(format: "PNG", path: path, offset: offset, reason: "image data inflates to \(filtered.count) bytes, \(expected) expected")
        }
        return try unfilterAll(filtered, header: h, bits: bits, passes: passes, rowBytes: (h.width * bits + 7) / 8)
    }

    /// Raw samples turned by `orientation`, filtered (never interlaced) and deflated: a new zlib stream.
    static func orientedStream(_ image: [UInt8], header h: PNGStructure.Header, orientation: Int) throws -> [UInt8] {
        let bits = (h.channels ?? 1) * h.bitDepth
        let (ow, oh) = orientation >= 5 ? (h.height, h.width) : (h.width, h.height)
        let oriented = orient(image, width: h.width, height: h.height, bits: bits, orientation: orientation)
        let refiltered = filter(oriented, rowBytes: (ow * bits + 7) / 8, height: oh, bytesPerPixel: max(1, bits / 8),
                                adaptive: h.bitDepth >= 8 && h.colorType != 3)
        return try Zlib.deflate(refiltered, level: 9)
    }

    /// Raw samples turned by `orientation`, unfiltered: what a re-read of the baked image must give.
    static func oriented(_ image: [UInt8], header h: PNGStructure.Header, orientation: Int) -> [UInt8] {
        orient(image, width: h.width, height: h.height, bits: (h.channels ?? 1) * h.bitDepth, orientation: orientation)
    }

    /// Adam7 passes as (x0, y0, dx, dy).
    static let adam7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]

    static func passSize(_ p: (Int, Int, Int, Int), _ width: Int, _ height: Int) -> (Int, Int) {
        let w = width > p.0 ? (width - p.0 + p.2 - 1) / p.2 : 0
        let h = height > p.1 ? (height - p.1 + p.3 - 1) / p.3 : 0
        return (w, h)
    }

    /// The full image as packed rows of `rowBytes`, filters undone and passes merged.
    private static func unfilterAll(_ data: [UInt8], header h: PNGStructure.Header, bits: Int, passes: [(Int, Int, Int, Int)],
                                    rowBytes: Int) throws -> [UInt8] {
        let bpp = max(1, bits / 8)
        var image = [UInt8](repeating: 0, count: rowBytes * h.height)
        var at = 0
        for pass in passes {
            let (pw, ph) = passSize(pass, h.width, h.height)
            guard pw > 0, ph > 0 else { continue }
            let passRowBytes = (pw * bits + 7) / 8
            var previous = [UInt8](repeating: 0, count: passRowBytes)
            var row = [UInt8](repeating: 0, count: passRowBytes)
            for py in 0..<ph {
                let filterType = data[at]
                for i in 0..<passRowBytes { row[i] = data[at + 1 + i] }
                at += 1 + passRowBytes
                try unfilter(&row, previous: previous, type: filterType, bpp: bpp)
                let y = pass.1 + py * pass.3
                if passes.count == 1 {
                    image.replaceSubrange(y * rowBytes..<(y + 1) * rowBytes, with: row)
                } else {
                    for px in 0..<pw {
                        setPixel(&image, rowStart: y * rowBytes, x: pass.0 + px * pass.2, bits: bits,
                                 value: pixel(row, rowStart: 0, x: px, bits: bits))
                    }
                }
                swap(&previous, &row)
            }
        }
        return image
    }

    private static func unfilter(_ row: inout [UInt8], previous: [UInt8], type: UInt8, bpp: Int) throws {
        switch type {
        case 0: break
        case 1: for i in bpp..<max(bpp, row.count) { row[i] = row[i] &+ row[i - bpp] }
        case 2: for i in 0..<row.count { row[i] = row[i] &+ previous[i] }
        case 3:
            for i in 0..<row.count {
                let left = i >= bpp ? Int(row[i - bpp]) : 0
                row[i] = row[i] &+ UInt8((left + Int(previous[i])) / 2)
            }
        case 4:
            for i in 0..<row.count {
                let a = i >= bpp ? row[i - bpp] : 0, b = previous[i], c = i >= bpp ? previous[i - bpp] : 0
                row[i] = row[i] &+ paeth(a, b, c)
            }
        default:
            throw MetascrubError.malformed(format: "PNG", path: "IDAT", offset: 8, reason: "unknown filter type \(type)")
        }
    }

    private static func paeth(_ a: UInt8, _ b: UInt8, _ c: UInt8) -> UInt8 {
        let p = Int(a) + Int(b) - Int(c)
        let pa = abs(p - Int(a)), pb = abs(p - Int(b)), pc = abs(p - Int(c))
        if pa <= pb && pa <= pc { return a }
        return pb <= pc ? b : c
    }

    /// A pixel's bits (up to 64) as an integer, most significant first as PNG packs them.
    @inline(__always)
    private static func pixel(_ buffer: [UInt8], rowStart: Int, x: Int, bits: Int) -> UInt64 {
        if bits >= 8 {
            let n = bits / 8, start = rowStart + x * n
            var v: UInt64 = 0
            for i in 0..<n { v = v << 8 | UInt64(buffer[start + i]) }
            return v
        }
        let bit = x * bits
        let shift = 8 - bits - bit % 8
        return UInt64((buffer[rowStart + bit / 8] >> UInt8(shift)) & UInt8((1 << bits) - 1))
    }

    @inline(__always)
    private static func setPixel(_ buffer: inout [UInt8], rowStart: Int, x: Int, bits: Int, value: UInt64) {
        if bits >= 8 {
            let n = bits / 8, start = rowStart + x * n
            for i in 0..<n { buffer[start + i] = UInt8(truncatingIfNeeded: value >> UInt64(8 * (n - 1 - i))) }
            return
        }
        let bit = x * bits
        let shift = UInt8(8 - bits - bit % 8)
        let mask = UInt8((1 << bits) - 1) << shift
        let at = rowStart + bit / 8
        buffer[at] = buffer[at] & ~mask | (UInt8(value) << shift) & mask
    }

    /// The image as displayed under `orientation`, as packed rows. Whole-byte pixels move as byte groups;
    /// 1-, 2- and 4-bit samples are unpacked to one byte each, moved, and packed again.
    private static func orient(_ image: [UInt8], width w: Int, height h: Int, bits: Int, orientation o: Int) -> [UInt8] {
        if bits >= 8 {
            return PixelOrientation.apply(o, width: w, height: h, pixels: image, channels: bits / 8).pixels
        }
        let inRow = (w * bits + 7) / 8
        var samples = [UInt8](repeating: 0, count: w * h)
        for y in 0..<h {
            for x in 0..<w { samples[y * w + x] = UInt8(pixel(image, rowStart: y * inRow, x: x, bits: bits)) }
        }
        let oriented = PixelOrientation.apply(o, width: w, height: h, pixels: samples, channels: 1)
        let outRow = (oriented.width * bits + 7) / 8
        var out = [UInt8](repeating: 0, count: outRow * oriented.height)
        for y in 0..<oriented.height {
            for x in 0..<oriented.width {
                setPixel(&out, rowStart: y * outRow, x: x, bits: bits, value: UInt64(oriented.pixels[y * oriented.width + x]))
            }
        }
        return out
    }

    /// Filtered scanlines: per row the filter with the smallest sum of absolute differences (the usual
    /// heuristic), or none for palette and sub-byte images where filters rarely help.
    private static func filter(_ image: [UInt8], rowBytes: Int, height: Int, bytesPerPixel bpp: Int, adaptive: Bool) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity((rowBytes + 1) * height)
        var previous = [UInt8](repeating: 0, count: rowBytes)
        var candidate = [UInt8](repeating: 0, count: rowBytes)
        var best = [UInt8](repeating: 0, count: rowBytes)
        for y in 0..<height {
            let row = Array(image[y * rowBytes..<(y + 1) * rowBytes])
            var bestType: UInt8 = 0
            best = row
            if adaptive {
                var bestScore = row.reduce(0) { $0 + Int(Int8(bitPattern: $1).magnitude) }
                for type in UInt8(1)...4 {
                    for i in 0..<rowBytes {
                        let a = i >= bpp ? row[i - bpp] : 0, b = previous[i], c = i >= bpp ? previous[i - bpp] : 0
                        let predictor: UInt8
                        switch type {
                        case 1: predictor = a
                        case 2: predictor = b
                        case 3: predictor = UInt8((Int(a) + Int(b)) / 2)
                        default: predictor = paeth(a, b, c)
                        }
                        candidate[i] = row[i] &- predictor
                    }
                    let score = candidate.reduce(0) { $0 + Int(Int8(bitPattern: $1).magnitude) }
                    if score < bestScore {
                        bestScore = score
                        bestType = type
                        swap(&best, &candidate)
                    }
                }
            }
            out.append(bestType)
            out += best
            previous = row
        }
        return out
    }
}
