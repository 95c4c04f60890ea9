// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubNative
import XCTest

/// `Fidelity` (issue 16) against figures computed here the plain way: PSNR over every sample in one pass,
/// whatever the banding across threads.
final class FidelityTests: XCTestCase {
    private func raster(_ w: Int, _ h: Int, _ f: (Int) -> UInt8) -> Raster {
        Raster(width: w, height: h, layout: .rgb, pixels: (0..<(w * h * 3)).map(f))
    }

    func testIdenticalImagesHaveNoPSNRAndFullSSIM() throws {
        let a = raster(300, 257) { UInt8(truncatingIfNeeded: $0 &* 31) }
        let f = try Fidelity.measure(a, a)
        XCTAssertNil(f.psnr)
        XCTAssertTrue(f.identical)
        XCTAssertEqual(f.ssim, 1, accuracy: 1e-9)
        XCTAssertTrue(f.meets(99))
    }

    func testPSNRMatchesAPlainComputationAtEverySize() throws {
        for (w, h) in [(8, 8), (45, 29), (300, 257), (640, 130)] {
            let a = raster(w, h) { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 / 3) }
            let b = raster(w, h) { i in UInt8(clamping: Int(a.pixels[i]) + (i % 5) - 2) }
            var squared = 0.0
            for i in 0..<a.pixels.count { let d = Double(a.pixels[i]) - Double(b.pixels[i]); squared += d * d }
            let expected = 10 * log10(255 * 255 / (squared / Double(a.pixels.count)))
            let f = try Fidelity.measure(a, b)
            XCTAssertEqual(try XCTUnwrap(f.psnr), expected, accuracy: 1e-9, "\(w)x\(h)")
            XCTAssertLessThanOrEqual(f.maximumDifference, 2)
            XCTAssertLessThan(f.ssim, 1)
            XCTAssertGreaterThan(f.ssim, 0.9)
        }
    }

    func testDifferentSizesAreAnError() {
        XCTAssertThrowsError(try Fidelity.measure(raster(4, 4) { _ in 0 }, raster(4, 5) { _ in 0 }))
    }
}
