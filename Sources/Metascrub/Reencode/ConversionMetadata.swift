// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubFormats
import MetascrubNative

/// What a conversion carries besides pixels, and the remux it is taken from.
///
/// Items the policy keeps (copyright and creator under `share`) are not re-created from values: the source is
/// first cleaned by its own handler, in memory and verified like any clean, with every orientation tag dropped
/// (the pixels are already upright); the Exif and XMP left in that remux are copied into the output as they are.
extension ImageConverter {
    /// Whether the policy keeps anything a converted file could carry (not structure, rendering or the image).
    static func keepsCarriable(_ findings: [Finding]) -> Bool {
        findings.contains { $0.disposition == .keep && $0.item.category != .structure && $0.item.category != .rendering }
    }

    /// The source cleaned by its handler with orientation tags dropped, verified; the source's bytes when
    /// nothing needs removing.
    func verifiedRemux(_ source: any ByteSource, scan: FormatScan, findings: [Finding]) throws -> [UInt8] {
        var settled = findings
        for index in settled.indices where Policy.orientationKeys.contains(settled[index].item.key) {
            settled[index].disposition = .remove
        }
        guard settled.contains(where: { $0.disposition != .keep }) else { return try source.readAll() }
        let sink = MemoryOutputSink()
        let result = try scan.clean(source, plan: CleanPlan(findings: settled, policy: options.policy, layout: options.layout), to: sink)
        _ = try Verifier(options: options).prove(original: source, scan: scan, findings: settled, result: result,
                                                 cleaned: MemoryByteSource(sink.bytes))
        return sink.bytes
    }

    /// Exif and XMP of a verified remux, for the output; nothing for formats without a reader here (JPEG XL).
    func carried(from remux: [UInt8]?, format: String) -> CarriedMetadata {
        guard let remux, format != "jxl" else { return CarriedMetadata() }
        if format == "tiff" {
            guard let found = try? TIFFCarried.metadata(of: remux) else { return CarriedMetadata() }
            return CarriedMetadata(exif: found.exif, xmp: found.xmp)
        }
        return (try? CarriedMetadata.fromHEIF(remux)) ?? CarriedMetadata()
    }
}
