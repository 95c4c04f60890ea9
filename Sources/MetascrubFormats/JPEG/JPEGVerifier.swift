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
        for (x, y) in zip(left, right) {
            let n = x.streamEnd - x.offset
            guard n == y.streamEnd - y.offset else {
                return ContentCheck(method: method, passed: false, detail: "\(x.name) at \(x.offset) changed size")
            }
            guard try ByteComparison.equal(original, x.offset..<x.streamEnd, cleaned, y.offset..<y.streamEnd) else {
                return ContentCheck(method: method, passed: false, detail: "\(x.name) at \(x.offset) differs")
            }
        }
        return ContentCheck(method: method, passed: true)
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

/// EXIF orientation applied to a decoded pixel buffer (what a viewer displays).
public enum PixelOrientation {
    /// Where output pixel (x, y) comes from in the source, as a pixel index `origin + x·stepX + y·stepY`: the
    /// orientation's switch is decided once per image, not per pixel (it was most of a rotated photo's bake
    /// decision, perf, issue 19).
    struct Walk {
        var width, height: Int
        var origin, stepX, stepY: Int

        init?(_ o: Int, width w: Int, height h: Int) {
            let last = (h - 1) * w
            switch o {
            case 2: (origin, stepX, stepY) = (w - 1, -1, w)
            case 3: (origin, stepX, stepY) = (last + w - 1, -1, -w)
            case 4: (origin, stepX, stepY) = (last, 1, -w)
            case 5: (origin, stepX, stepY) = (0, w, 1)
            case 6: (origin, stepX, stepY) = (last, -w, 1)
            case 7: (origin, stepX, stepY) = (last + w - 1, -w, -1)
            case 8: (origin, stepX, stepY) = (w - 1, w, -1)
            default: return nil
            }
            (width, height) = o >= 5 ? (h, w) : (w, h)
        }
    }

    public static func apply<T>(_ o: Int, width w: Int, height h: Int, pixels: [T], channels c: Int) -> (width: Int, height: Int, pixels: [T]) {
        guard !pixels.isEmpty, pixels.count >= w * h * c, let walk = Walk(o, width: w, height: h) else { return (w, h, pixels) }
        var out = pixels
        pixels.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                var to = 0
                for y in 0..<walk.height {
                    var from = walk.origin + y * walk.stepY
                    for _ in 0..<walk.width {
                        for k in 0..<c { dst[to + k] = src[from * c + k] }
                        to += c
                        from += walk.stepX
                    }
                }
            }
        }
        return (walk.width, walk.height, out)
    }

    /// Whether `turned` is `pixels` with orientation `o` applied, stopping at the first difference (a photo whose
    /// rotation is inexact differs in its first blocks; building the turned copy first cost the whole image).
    public static func matches(_ o: Int, width w: Int, height h: Int, pixels: [UInt8], channels c: Int,
                               turned: (width: Int, height: Int, pixels: [UInt8])) -> Bool {
        guard pixels.count == w * h * c, turned.pixels.count == pixels.count else { return false }
        guard let walk = Walk(o, width: w, height: h) else { return turned.width == w && turned.height == h && turned.pixels == pixels }
        guard turned.width == walk.width, turned.height == walk.height else { return false }
        return pixels.withUnsafeBufferPointer { src in
            turned.pixels.withUnsafeBufferPointer { dst in
                var to = 0
                for y in 0..<walk.height {
                    var from = walk.origin + y * walk.stepY
                    for _ in 0..<walk.width {
                        for k in 0..<c where dst[to + k] != src[from * c + k] { return false }
                        to += c
                        from += walk.stepX
                    }
                }
                return true
            }
        }
    }
}
