// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubNative

#if canImport(Glibc)
import Glibc
#endif

/// Checks that a cleaned JPEG shows exactly what the original showed.
enum JPEGVerifier {
    /// Remux: the frame, tables and entropy-coded data must be the same bytes in the same order.
    static func imageStream(original: any ByteSource, _ a: JPEGStructure, cleaned: any ByteSource, _ b: JPEGStructure) throws -> ContentCheck {
        let method = "image stream (frame, tables, entropy-coded data) byte-identical"
        let left = a.segments.filter { $0.role == .structural || $0.role == .scan }
        let right = b.segments.filter { $0.role == .structural || $0.role == .scan }
        guard left.count == right.count else {
            return ContentCheck(method: method, passed: false, detail: "\(left.count) image segments became \(right.count)")
        }
        var identical: [(original: Range<Int64>, cleaned: Range<Int64>)] = []
        for (x, y) in zip(left, right) {
            let n = x.streamEnd - x.offset
            guard n == y.streamEnd - y.offset else {
                return ContentCheck(method: method, passed: false, detail: "\(x.name) at \(x.offset) changed size")
            }
            guard try equal(original, x, cleaned, y) else {
                return ContentCheck(method: method, passed: false, detail: "\(x.name) at \(x.offset) differs")
            }
            identical.append((x.offset..<x.streamEnd, y.offset..<y.streamEnd))
        }
        var check = ContentCheck(method: method, passed: true)
        check.identical = identical
        return check
    }

    /// Segment `x` of the original and `y` of the cleaned file, each with its entropy-coded data, byte for byte.
    /// When the cleaned file's parse already compared `y`'s entropy-coded data with exactly `x`'s in this same
    /// original (`EntropyHint`), only the segment header is left to compare: the data is not compared twice.
    private static func equal(_ original: any ByteSource, _ x: JPEGStructure.Segment, _ cleaned: any ByteSource,
                              _ y: JPEGStructure.Segment) throws -> Bool {
        let headerEnd = x.offset + Int64(x.length)
        if let copied = y.copiedFrom, copied.source == ObjectIdentifier(original), x.length == y.length,
           let end = x.entropyEnd, copied.range == headerEnd..<(end + 2) {
            return try ByteComparison.equal(original, x.offset..<headerEnd, cleaned, y.offset..<(y.offset + Int64(y.length)))
        }
        return try ByteComparison.equal(original, x.offset..<x.streamEnd, cleaned, y.offset..<y.streamEnd)
    }

    /// A DCT-domain turn under `reencode: true` (`JPEGBake.Decision.turn`): the written image stream is the
    /// perfect transform of the original, made again here, byte for byte (so no coefficient was requantised), and
    /// its decode is within `minimumPSNR` of the original displayed with its orientation. The figure goes into
    /// the report's content line, the rung's equivalent of a re-encode's PSNR.
    static func turn(original: any ByteSource, orientation: Int, cleaned: any ByteSource, _ structure: JPEGStructure,
                     minimumPSNR: Double) throws -> ContentCheck {
        guard let transform = JPEGFormat.transform(forOrientation: orientation) else {
            return ContentCheck(method: "none", passed: false, detail: "a transform without an orientation")
        }
        let source = try original.readAll()
        let expected = try LosslessJPEG.transform(source, transform)
        let stream = try imageStream(original: MemoryByteSource(expected), try JPEGStructure.parse(MemoryByteSource(expected)),
                                     cleaned: cleaned, structure)
        guard stream.passed else { return stream }
        let fidelity = try JPEGBake.turnedFidelity(original: source, orientation: orientation, turned: try cleaned.readAll())
        let method = "lossless DCT-domain transform, no coefficient requantised; decoded pixels against the original displayed with its orientation: "
            + "\(fidelity.summary) (min-psnr \(Reencoding.decimal(minimumPSNR, 1)) dB)"
        return ContentCheck(method: method, passed: fidelity.meets(minimumPSNR),
                            detail: fidelity.meets(minimumPSNR) ? nil : "the turned image decodes at \(fidelity.summary), under min-psnr")
    }

    /// Lossless transform: the cleaned image decodes to the original's pixels with its orientation applied.
    static func displayedPixels(original: any ByteSource, orientation: Int, cleaned: any ByteSource, tolerance: Int = 0) throws -> ContentCheck {
        let method = tolerance == 0 ? "decoded pixels identical to the original displayed with its orientation"
            : "decoded pixels within ±\(tolerance) of the original displayed with its orientation"
        let a = try LosslessJPEG.decodeRGB(original.readAll())
        let b = try LosslessJPEG.decodeRGB(cleaned.readAll())
        let expected = PixelOrientation.apply(orientation, width: a.width, height: a.height, pixels: a.pixels, channels: 3)
        guard expected.width == b.width, expected.height == b.height else {
            return ContentCheck(method: method, passed: false, detail: "size \(b.width)×\(b.height), expected \(expected.width)×\(expected.height)")
        }
        if expected.pixels == b.pixels { return ContentCheck(method: method, passed: true) }
        var differing = 0, worst = 0
        for (x, y) in zip(expected.pixels, b.pixels) where x != y {
            differing += 1
            worst = max(worst, abs(Int(x) - Int(y)))
        }
        return ContentCheck(method: method, passed: worst <= tolerance,
                            detail: "\(differing) of \(b.pixels.count) samples differing by up to \(worst) levels")
    }
}
