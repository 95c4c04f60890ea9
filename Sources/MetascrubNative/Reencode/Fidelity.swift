// SPDX-License-Identifier: GPL-3.0-or-later

/// How close a re-encoded image is to the source's displayed render: the figure a re-encode is judged by.
public struct Fidelity: Sendable, Equatable {
    /// PSNR over the R, G and B samples, in dB; nil when the images are identical (infinite PSNR).
    public var psnr: Double?
    /// Mean SSIM of the luma over 8×8 windows (1 = identical structure).
    public var ssim: Double
    /// Largest difference of any sample.
    public var maximumDifference: Int

    public var identical: Bool { psnr == nil }

    /// Whether the PSNR reaches `threshold` dB (identical images always do).
    public func meets(_ threshold: Double) -> Bool { psnr.map { $0 >= threshold } ?? true }

    /// "PSNR 46.51 dB, SSIM 0.9912" or "identical pixels".
    public var summary: String {
        guard let psnr else { return "identical pixels" }
        return "PSNR \(Self.format(psnr, 2)) dB, SSIM \(Self.format(ssim, 4))"
    }

    static func format(_ value: Double, _ digits: Int) -> String {
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let rounded = (value * scale).rounded() / scale
        var text = String(rounded)
        if let dot = text.firstIndex(of: ".") {
            let decimals = text.distance(from: dot, to: text.endIndex) - 1
            if decimals < digits { text += String(repeating: "0", count: digits - decimals) }
        }
        return text
    }

    /// Compares two rasters of the same size (alpha ignored; gray compared as RGB). Throws when the sizes differ,
    /// which for a conversion means the orientation or crop was not carried over.
    public static func measure(_ reference: Raster, _ candidate: Raster) throws -> Fidelity {
        guard reference.width == candidate.width, reference.height == candidate.height else {
            throw NativeError.library(name: "metascrub", message:
                "re-encoded image is \(candidate.width)×\(candidate.height), the source shows \(reference.width)×\(reference.height)")
        }
        let a = reference.rgb(), b = candidate.rgb()
        var squared: UInt64 = 0
        var maximum = 0
        a.pixels.withUnsafeBufferPointer { p in
            b.pixels.withUnsafeBufferPointer { q in
                for i in 0..<p.count {
                    let d = Int(p[i]) - Int(q[i])
                    squared &+= UInt64(d * d)
                    if abs(d) > maximum { maximum = abs(d) }
                }
            }
        }
        let ssim = meanSSIM(a, b)
        guard squared > 0 else { return Fidelity(psnr: nil, ssim: 1, maximumDifference: 0) }
        let mse = Double(squared) / Double(a.pixels.count)
        return Fidelity(psnr: 10 * log10(255 * 255 / mse), ssim: ssim, maximumDifference: maximum)
    }

    /// SSIM (Wang et al. 2004, C1 = (0.01·255)², C2 = (0.03·255)²) of BT.601 luma over non-overlapping 8×8
    /// windows: the usual structural figure, cheap enough for 12 MP (integer luma and window sums; floating
    /// point once per window).
    static func meanSSIM(_ a: Raster, _ b: Raster) -> Double {
        let w = a.width, h = a.height, n = 8
        guard w >= n, h >= n else { return a.pixels == b.pixels ? 1 : 0 }
        let c1 = 6.5025, c2 = 58.5225
        var total = 0.0
        var windows = 0
        a.pixels.withUnsafeBufferPointer { p in
            b.pixels.withUnsafeBufferPointer { q in
                @inline(__always) func luma(_ s: UnsafeBufferPointer<UInt8>, _ i: Int) -> Int {
                    (77 * Int(s[i]) + 150 * Int(s[i + 1]) + 29 * Int(s[i + 2]) + 128) >> 8
                }
                var y = 0
                while y + n <= h {
                    var x = 0
                    while x + n <= w {
                        var sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0
                        for yy in y..<(y + n) {
                            var i = (yy * w + x) * 3
                            for _ in 0..<n {
                                let la = luma(p, i), lb = luma(q, i)
                                sa += la; sb += lb; saa += la * la; sbb += lb * lb; sab += la * lb
                                i += 3
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
            }
        }
        return total / Double(windows)
    }
}

#if canImport(Glibc)
import Glibc
#endif
