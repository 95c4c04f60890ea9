// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// MP4, MOV, M4A/M4B, 3GP: box-level remux. Metadata atoms, keys, XMP and timed-metadata tracks go; header
/// times, handler and compressor names are blanked; every kept audio, video and subtitle sample is copied
/// byte for byte (only encoder SEI payloads are overwritten in place, same length).
public struct MP4Format: FormatHandler {
    public let formatName: String

    public init(formatName: String = "MP4") { self.formatName = formatName }

    public func scan(_ input: any ByteSource, options: ScanOptions) throws -> ScanResult<MP4Layout> {
        try MP4Scanner.scan(input, format: formatName, options: options)
    }

    public func clean(_ input: any ByteSource, scan: ScanResult<MP4Layout>, plan: CleanPlan, to output: any OutputSink) throws -> CleanResult {
        let layout = scan.layout
        var cleaner = MP4Cleaner(source: input, layout: layout, plan: plan, cleaned: try scan.cleanedEmbeddedFiles(plan))
        return try cleaner.run(to: output)
    }

    public func verifyContent(original: any ByteSource, _ before: MP4Layout, cleaned: any ByteSource, _ after: MP4Layout, result: CleanResult) throws -> ContentCheck {
        return try MP4Verifier.verify(original: original, before, cleaned: cleaned, after)
    }
}
