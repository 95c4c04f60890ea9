// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

extension Fidelity {
    /// PSNR over R, G and B and luma SSIM of two 8-bit 4:2:0 images, computed on their planes in one pass, with
    /// no RGB image built.
    ///
    /// Why this is the RGB figure: both images are shown through the same BT.601 full-range conversion (the only
    /// case `HEIFDecoder.renderYCbCr` admits), which is linear, so the difference of the two RGB renders is
    /// the conversion of the plane differences: ΔR = ΔY + 1.402·ΔCr, ΔG = ΔY − 0.344136·ΔCb − 0.714136·ΔCr,
    /// ΔB = ΔY + 1.772·ΔCb, each luma sample taking the chroma difference of its 2×2 block, as libheif's
    /// nearest-neighbour upsampling does. The figure is before rounding and clipping to 8 bits; clipping can only
    /// shrink a difference. A viewer that interpolates chroma averages neighbouring differences, which does not
    /// raise their energy. SSIM is over Y, which is the BT.601 luma of the render.
    static func measure(planes source: YCbCrImage, _ candidate: [UnsafePointer<UInt8>], strides: [Int]) -> Fidelity {
        let width = source.width, height = source.height
        let s = source.planes, t = candidate
        let ss = source.strides, ts = strides
        var squared = 0.0
        var maximum = 0.0
        for cy in 0..<source.chromaHeight {
            for cx in 0..<source.chromaWidth {
                let dCb = Double(Int(t[1][cy * ts[1] + cx]) - Int(s[1][cy * ss[1] + cx]))
                let dCr = Double(Int(t[2][cy * ts[2] + cx]) - Int(s[2][cy * ss[2] + cx]))
                let r = 1.402 * dCr, g = -0.344136 * dCb - 0.714136 * dCr, b = 1.772 * dCb
                for y in (2 * cy)..<min(height, 2 * cy + 2) {
                    for x in (2 * cx)..<min(width, 2 * cx + 2) {
                        let dY = Double(Int(t[0][y * ts[0] + x]) - Int(s[0][y * ss[0] + x]))
                        let dr = dY + r, dg = dY + g, db = dY + b
                        squared += dr * dr + dg * dg + db * db
                        maximum = max(maximum, abs(dr), abs(dg), abs(db))
                    }
                }
            }
        }
        let ssim = lumaSSIM(s[0], ss[0], t[0], ts[0], width: width, height: height)
        guard squared > 0 else { return Fidelity(psnr: nil, ssim: 1, maximumDifference: 0) }
        let mse = squared / Double(width * height * 3)
        return Fidelity(psnr: 10 * log10(255 * 255 / mse), ssim: ssim, maximumDifference: Int(maximum.rounded()))
    }

    /// Mean SSIM over non-overlapping 8×8 windows of two luma planes (the constants of `ssimRow`); 1 for an image
    /// smaller than one window whose planes are equal, else 0 there.
    static func lumaSSIM(_ a: UnsafePointer<UInt8>, _ aStride: Int, _ b: UnsafePointer<UInt8>, _ bStride: Int,
                         width: Int, height: Int) -> Double {
        let n = 8, c1 = 6.5025, c2 = 58.5225
        var total = 0.0
        var windows = 0
        var equal = true
        var y = 0
        while y + n <= height {
            var x = 0
            while x + n <= width {
                var sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0
                for yy in y..<(y + n) {
                    let ra = a + yy * aStride + x, rb = b + yy * bStride + x
                    for i in 0..<n {
                        let la = Int(ra[i]), lb = Int(rb[i])
                        sa += la; sb += lb; saa += la * la; sbb += lb * lb; sab += la * lb
                    }
                }
                let count = Double(n * n)
                let ma = Double(sa) / count, mb = Double(sb) / count
                let va = Double(saa) / count - ma * ma, vb = Double(sbb) / count - mb * mb
                let cov = Double(sab) / count - ma * mb
                total += ((2 * ma * mb + c1) * (2 * cov + c2)) / ((ma * ma + mb * mb + c1) * (va + vb + c2))
                windows += 1
                x += n
            }
            y += n
        }
        if windows > 0 { return total / Double(windows) }
        for row in 0..<height where memcmp(a + row * aStride, b + row * bStride, width) != 0 { equal = false }
        return equal ? 1 : 0
    }
}
