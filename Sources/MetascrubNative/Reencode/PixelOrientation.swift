// SPDX-License-Identifier: GPL-3.0-or-later

/// EXIF orientation applied to a decoded pixel buffer (what a viewer displays).
public enum PixelOrientation {
    public static func apply<T>(_ o: Int, width w: Int, height h: Int, pixels: [T], channels c: Int) -> (width: Int, height: Int, pixels: [T]) {
        guard (2...8).contains(o), !pixels.isEmpty else { return (w, h, pixels) }
        let swap = o >= 5
        let (ow, oh) = swap ? (h, w) : (w, h)
        var out = pixels
        for y in 0..<oh {
            for x in 0..<ow {
                let (sx, sy): (Int, Int)
                switch o {
                case 2: (sx, sy) = (w - 1 - x, y)
                case 3: (sx, sy) = (w - 1 - x, h - 1 - y)
                case 4: (sx, sy) = (x, h - 1 - y)
                case 5: (sx, sy) = (y, x)
                case 6: (sx, sy) = (y, h - 1 - x)
                case 7: (sx, sy) = (w - 1 - y, h - 1 - x)
                default: (sx, sy) = (w - 1 - y, x)
                }
                let from = (sy * w + sx) * c, to = (y * ow + x) * c
                for k in 0..<c { out[to + k] = pixels[from + k] }
            }
        }
        return (ow, oh, out)
    }
}
