// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import Synchronization

/// The most pixels any path may decode as a whole image (bake proofs, re-encodes, conversions, their
/// verification): policy `max-pixels:`, `--max-pixels`. A JPEG may declare 65500×65500 in a few kilobytes
/// (about 13 GB decoded); every whole-image decoder checks the declared size here before it allocates
/// anything, so a decompression bomb costs a header read, not memory in proportion to what it claims (issue 25).
///
/// Process-wide because the decoders sit below the pipeline's options: `Engine` sets it from the policy.
public enum PixelBudget {
    /// Near 100 MP: every phone and camera sensor of 2026 fits (the largest mass-market ones are ~200 MP, raws
    /// that are not decoded whole here), and a decoded RGBA image this size is 400 MB.
    public static let defaultLimit = 100_000_000

    private static let current = Atomic<Int>(defaultLimit)

    public static var limit: Int {
        get { current.load(ordering: .relaxed) }
        set { current.store(max(1, newValue), ordering: .relaxed) }
    }

    public static func allows(width: Int, height: Int, limit: Int = PixelBudget.limit) -> Bool {
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        return width > 0 && height > 0 && !overflow && pixels <= limit
    }

    /// Throws a clear limit error when `width`×`height` is over the budget; `what` names the decode.
    public static func check(width: Int, height: Int, _ what: String, limit: Int = PixelBudget.limit) throws(MetascrubError) {
        guard !allows(width: width, height: height, limit: limit) else { return }
        throw .limitExceeded(format: what, path: "decoded image \(width)×\(height)", offset: 0,
                             limit: "\(describe(limit)) (--max-pixels, policy max-pixels:)")
    }

    /// "100 MP" or "4096 pixels".
    public static func describe(_ pixels: Int) -> String {
        pixels >= 1_000_000 && pixels % 1_000_000 == 0 ? "\(pixels / 1_000_000) MP"
            : pixels >= 1_000_000 ? "\(Double(pixels / 100_000) / 10) MP" : "\(pixels) pixels"
    }
}
