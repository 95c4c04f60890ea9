// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization

/// How close a re-encoded image is to the source's displayed render: the figure a re-encode is judged by.
public struct Fidelity: Sendable, Equatable {
    /// PSNR over the R, G and B samples, in dB; nil when the images are identical (infinite PSNR).
    public var psnr: Double?
    /// Mean SSIM of the luma over 8×8 windows (1 = identical structure).
    public var ssim: Double
    /// Largest difference of any sample.
    public var maximumDifference: Int

    public var identical: Bool { psnr == nil }

    /// Two images with the same samples (a lossless re-encode checked sample by sample).
    public static let identicalPixels = Fidelity(psnr: nil, ssim: 1, maximumDifference: 0)

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
        // Bands of rows measured on all cores: on a 12 MP image this is most of metascrub's own CPU time.
        let bands = max(1, min(ProcessInfo.processInfo.activeProcessorCount, a.height / 64))
        let partial = Partial.collect(bands) { band in
            let rows = (a.height * band / bands)..<(a.height * (band + 1) / bands)
            return Partial(a, b, rows: rows)
        }
        let squared = partial.reduce(UInt64(0)) { $0 + $1.squared }
        let maximum = partial.map(\.maximum).max() ?? 0
        let windows = partial.reduce(0) { $0 + $1.windows }
        let ssim = windows == 0 ? (a.pixels == b.pixels ? 1 : 0) : partial.reduce(0.0) { $0 + $1.ssimSum } / Double(windows)
        guard squared > 0 else { return Fidelity(psnr: nil, ssim: 1, maximumDifference: 0) }
        let mse = Double(squared) / Double(a.pixels.count)
        return Fidelity(psnr: 10 * log10(255 * 255 / mse), ssim: ssim, maximumDifference: maximum)
    }

    /// One band's squared error, largest difference and SSIM window sum (windows start on multiples of 8 rows).
    struct Partial: Sendable {
        var squared: UInt64 = 0
        var maximum = 0
        var ssimSum = 0.0
        var windows = 0

        init() {}

        init(_ a: Raster, _ b: Raster, rows: Range<Int>) {
            let w = a.width
            a.pixels.withUnsafeBufferPointer { p in
                b.pixels.withUnsafeBufferPointer { q in
                    for i in (rows.lowerBound * w * 3)..<(rows.upperBound * w * 3) {
                        let d = Int(p[i]) - Int(q[i])
                        squared &+= UInt64(d * d)
                        if d > maximum || -d > maximum { maximum = abs(d) }
                    }
                }
            }
            // Each window row belongs to the band holding its first row (it may read on into the next band).
            var y = (rows.lowerBound + 7) / 8 * 8
            while y < rows.upperBound, y + 8 <= a.height {
                let (sum, count) = Fidelity.ssimRow(a, b, y: y)
                ssimSum += sum
                windows += count
                y += 8
            }
        }

        /// Runs `body` for each band on its own thread and returns the results in band order.
        static func collect(_ count: Int, _ body: @escaping @Sendable (Int) -> Partial) -> [Partial] {
            if count == 1 { return [body(0)] }
            let results = ResultBox(count)
            DispatchQueue.concurrentPerform(iterations: count) { results.set($0, body($0)) }
            return results.values
        }
    }

    /// Slots written by distinct threads, each exactly once, read after all have finished.
    final class ResultBox: Sendable {
        private let slots: Mutex<[Partial]>
        init(_ count: Int) { slots = Mutex(Array(repeating: Partial(), count: count)) }
        func set(_ index: Int, _ value: Partial) { slots.withLock { $0[index] = value } }
        var values: [Partial] { slots.withLock { $0 } }
    }

    /// SSIM (Wang et al. 2004, C1 = (0.01·255)², C2 = (0.03·255)²) of BT.601 luma over non-overlapping 8×8
    /// windows, one row of windows starting at `y`: the sum over the row and the number of windows. Integer
    /// luma and window sums; floating point once per window.
    static func ssimRow(_ a: Raster, _ b: Raster, y: Int) -> (Double, Int) {
        let w = a.width, n = 8
        var total = 0.0
        var windows = 0
        a.pixels.withUnsafeBufferPointer { p in
            b.pixels.withUnsafeBufferPointer { q in
                @inline(__always) func luma(_ s: UnsafeBufferPointer<UInt8>, _ i: Int) -> Int {
                    (77 * Int(s[i]) + 150 * Int(s[i + 1]) + 29 * Int(s[i + 2]) + 128) >> 8
                }
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
                    total += Fidelity.ssimWindow(sa: sa, sb: sb, saa: saa, sbb: sbb, sab: sab, count: n * n)
                    windows += 1
                    x += n
                }
            }
        }
        return (total, windows)
    }
}

extension Fidelity {
    /// SSIM of one window from its luma sums (the constants are the usual (0.01·255)² and (0.03·255)²); shared
    /// by the whole-image and the streamed measure so both give the same figure.
    static func ssimWindow(sa: Int, sb: Int, saa: Int, sbb: Int, sab: Int, count n: Int) -> Double {
        let c1 = 6.5025, c2 = 58.5225
        let count = Double(n)
        let ma = Double(sa) / count, mb = Double(sb) / count
        let va = Double(saa) / count - ma * ma, vb = Double(sbb) / count - mb * mb
        let cov = Double(sab) / count - ma * mb
        return ((2 * ma * mb + c1) * (2 * cov + c2)) / ((ma * ma + mb * mb + c1) * (va + vb + c2))
    }
}
