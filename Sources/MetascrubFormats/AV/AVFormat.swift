// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// The general path for media no native handler claims (FLV, MPEG-PS, MXF, CAF, NUT, WavPack, …): libavformat
/// reads the container, the policy decides per tag and per metadata stream, and a stream-copy remux (no
/// re-encoding, bitexact muxer flags) writes what is kept. Verified by decoding every stream of both files.
/// This file is the only glue to `FormatHandler`; the work is in `AVCleaner` and `AVLibrary`.
public struct AVFormat: FormatHandler {
    static let format = "libavformat"

    public init() {}

    public func scan(_ input: any ByteSource, options: ScanOptions) throws -> ScanResult {
        var scanner = AVScanner(options: options)
        scanner.run(try AVLibrary.scan(input, format: Self.format))
        scanner.layout.head = try input.read(at: 0, count: Int(min(16, input.size)))
        let note = Note(.info, code: "libavformat", "read by libavformat: \(scanner.layout.containerName) (\(scanner.layout.demuxer))")
        return ScanResult(items: scanner.items, notes: [note], layout: scanner.layout)
    }

    public func clean(_ input: any ByteSource, scan: ScanResult, plan: CleanPlan, to output: any OutputSink) throws -> CleanResult {
        guard let layout = scan.layout as? AVLayout else {
            throw MetascrubError.malformed(format: Self.format, path: "scan", offset: 0, reason: "no layout from the scan")
        }
        return try AVCleaner(layout: layout, items: scan.items, plan: plan).run(input, to: output)
    }

    public func verifyContent(original: any ByteSource, originalScan: ScanResult, cleaned: any ByteSource,
                              cleanedScan: ScanResult, result: CleanResult) throws -> ContentCheck {
        guard let layout = originalScan.layout as? AVLayout else {
            throw MetascrubError.malformed(format: Self.format, path: "scan", offset: 0, reason: "no layout from the scan")
        }
        return try AVCleaner.verify(original: original, cleaned: cleaned, layout: layout)
    }
}
