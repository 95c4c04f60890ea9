// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubFormats
import MetascrubNative

/// `orientation: bake` with `reencode: true`, for images no lossless transform can turn: JPEGs whose size is
/// not whole MCUs (or whose DCT-domain turn decodes under min-psnr), WebP, TIFF strips. The container is first cleaned as
/// usual with the tag dropped (so everything else the policy keeps stays, byte for byte); then its pixels are
/// decoded, turned as the tag said, and encoded again (`OrientationCodings`). Verified before it is written
/// (`VerifiedReencode`): the re-scan finds nothing the policy removes and the decoded output is within
/// min-psnr of the original's displayed render (identical for lossless codings).
struct OrientationReencoder {
    var options: ProcessingOptions

    typealias Need = ReencodableBake

    var shared: VerifiedReencode { VerifiedReencode(options: options, noun: "re-encoded") }

    func clean(_ source: any ByteSource, scan: FormatScan, findings: [Finding], plan: CleanPlan,
               need: Need, to destination: any CleanDestination, report: inout FileReport) throws {
        // 1. The usual remux with the tag dropped instead of baked.
        var remuxPlan = plan
        remuxPlan.findings[need.item].disposition = .remove
        let sink = MemoryOutputSink()
        var result = try scan.clean(source, plan: remuxPlan, to: sink)
        let remuxed = sink.bytes

        // 2–3. The original's displayed render, encoded again and measured against it.
        let chosen: ReencodedImage
        switch need.coding {
        case .jpeg: chosen = try reencodeJPEG(remuxed, need, report: &report)
        case .webp(let lossless): chosen = try reencodeWebP(remuxed, need, lossless: lossless, report: &report)
        case .tiff: chosen = try reencodeTIFF(remuxed, need, report: &report)
        }

        // 4–5. Re-scanned with the policy, then written atomically, like every clean.
        try Verifier(options: options).verify(reencoded: chosen, noun: shared.noun, original: source, scan: scan, findings: findings, report: &report)
        try shared.write(chosen, to: destination, report: &report)

        result.method = .reencode
        result.outcomes[need.item] = .baked
        result.notes.append(Note(.info, code: "orientation-reencoded",
                                 "orientation \(need.orientation) baked by re-encoding (reencode: true): \(need.reason)"))
        report.recordCleaned(result, findings: findings, output: destination.name, showValues: options.showValues)
        report.reencode = shared.reencoding(chosen, reason: "orientation bake: \(need.reason)", from: chosen.format)
    }
}
