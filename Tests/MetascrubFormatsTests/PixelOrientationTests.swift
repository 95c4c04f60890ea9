// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubFormats
import MetascrubNative
import XCTest

/// The orientation walk against the EXIF definition written out pixel by pixel (the oracle here is the spec's
/// table of where the 0th row and column go, not the code under test).
final class PixelOrientationTests: XCTestCase {
    func testEveryOrientationMovesPixelsAsExifSays() {
        let w = 5, h = 3, c = 2
        let pixels = (0..<(w * h * c)).map { UInt8($0) }
        for o in 1...8 {
            let turned = PixelOrientation.apply(o, width: w, height: h, pixels: pixels, channels: c)
            let (ow, oh) = o >= 5 ? (h, w) : (w, h)
            XCTAssertEqual(turned.width, ow, "orientation \(o)")
            XCTAssertEqual(turned.height, oh, "orientation \(o)")
            for y in 0..<oh {
                for x in 0..<ow {
                    let (sx, sy): (Int, Int) = switch o {
                    case 2: (w - 1 - x, y)
                    case 3: (w - 1 - x, h - 1 - y)
                    case 4: (x, h - 1 - y)
                    case 5: (y, x)
                    case 6: (y, h - 1 - x)
                    case 7: (w - 1 - y, h - 1 - x)
                    case 8: (w - 1 - y, x)
                    default: (x, y)
                    }
                    for k in 0..<c {
                        XCTAssertEqual(turned.pixels[(y * ow + x) * c + k], pixels[(sy * w + sx) * c + k], "orientation \(o) at \(x),\(y)")
                    }
                }
            }
            XCTAssertTrue(PixelOrientation.matches(o, width: w, height: h, pixels: pixels, channels: c, turned: turned), "orientation \(o)")
            var off = turned
            off.pixels[off.pixels.count - 1] &+= 1
            XCTAssertFalse(PixelOrientation.matches(o, width: w, height: h, pixels: pixels, channels: c, turned: off), "orientation \(o)")
        }
    }
}
