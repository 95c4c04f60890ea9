// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// The general path for media no native handler claims (FLV, MPEG-PS, MXF, CAF, NUT, WavPack, …): libavformat
/// reads the container, the policy decides per tag and per metadata stream, and a stream-copy remux (no
/// re-encoding, bitexact muxer flags) writes what is kept. Verified by decoding every stream of both files.
/// This file is the only glue to `FormatHandler`; the work is in `AVScanner`, `AVCleaner` and `AVLibrary`.
public struct AVFormat: FormatHandler {
    static let format = "libavformat"

    public init() {}

    public func scan(_ input: any ByteSource, options: ScanOptions) throws -> ScanResult<AVLayout> {
        var scanner = AVScanner(options: options)
        scanner.run(try AVLibrary.scan(input, format: Self.format))
        scanner.layout.head = try input.read(at: 0, count: Int(min(16, input.size)))
        if scanner.layout.demuxer == "flv" { scanner.items += try FLVStructure.items(input, options: options) }
        let note = Note(.info, code: "libavformat", "read by libavformat: \(scanner.layout.containerName) (\(scanner.layout.demuxer))")
        return ScanResult(items: scanner.items, notes: [note], layout: scanner.layout)
    }

    public func clean(_ input: any ByteSource, scan: ScanResult<AVLayout>, plan: CleanPlan, to output: any OutputSink) throws -> CleanResult {
        try AVCleaner(layout: scan.layout, items: scan.items, plan: plan).run(input, to: output)
    }

    public func verifyContent(original: any ByteSource, _ before: AVLayout, cleaned: any ByteSource, _ after: AVLayout,
                              result: CleanResult) throws -> ContentCheck {
        try AVCleaner.verify(original: original, cleaned: cleaned, layout: before)
    }
}
