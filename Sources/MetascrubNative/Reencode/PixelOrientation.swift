// SPDX-License-Identifier: GPL-3.0-or-later

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
