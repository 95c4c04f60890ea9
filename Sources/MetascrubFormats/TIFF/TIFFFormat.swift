// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// TIFF and BigTIFF (baseline, either byte order): the IFD chain is rewritten with the structural tags and the
/// kept metadata; strips and tiles are copied byte for byte and their offsets rewritten. Camera raws (DNG and
/// other TIFF-based raws, recognised by their DNG version or sensor-data images) go to `RawTIFFFormat`, which
/// cleans them in place.
public struct TIFFFormat: FormatHandler {
    /// A plain TIFF, or a raw only the scan tells apart (NEF, ARW, PEF, a DNG whose IFD0 is not in the first bytes).
    public enum Layout: Sendable {
        case tiff(TIFFLayout)
        case raw(RawTIFFLayout)
    }

    public init() {}

    /// Full-resolution pages in the main IFD chain (thumbnails and previews not counted); 0 when the file does
    /// not scan as a plain TIFF.
    public static func pageCount(_ input: any ByteSource) -> Int {
        guard let scan = try? TIFFScanner.scan(input, options: ScanOptions()) else { return 0 }
        return scan.layout.chain.filter { scan.layout.nodes[$0].role == .page }.count
    }

    /// Whether a file detected as TIFF is a camera raw only the scan tells apart (NEF, ARW, PEF, a late DNG).
    public static func isCameraRaw(_ input: any ByteSource) -> Bool {
        do {
            _ = try TIFFScanner.scan(input, options: ScanOptions())
            return false
        } catch MetascrubError.unsupported(let format, _) where format == TIFFScanner.rawFormat || format == "DNG" {
            return true
        } catch {
            return false
        }
    }

    public func scan(_ input: any ByteSource, options: ScanOptions) throws -> ScanResult<Layout> {
        do {
            let scan = try TIFFScanner.scan(input, options: options)
            return scan.with(layout: .tiff(scan.layout))
        } catch MetascrubError.unsupported(let format, _) where format == TIFFScanner.rawFormat || format == "DNG" {
            let scan = try RawTIFFFormat().scan(input, options: options)
            return scan.with(layout: .raw(scan.layout))
        }
    }

    public func clean(_ input: any ByteSource, scan: ScanResult<Layout>, plan: CleanPlan, to output: any OutputSink) throws -> CleanResult {
        let layout: TIFFLayout
        switch scan.layout {
        case .raw(let raw): return try RawTIFFFormat().clean(input, scan: scan.with(layout: raw), plan: plan, to: output)
        case .tiff(let tiff): layout = tiff
        }
        var result = CleanResult(method: .remux)
        var writer = TIFFWriter(layout: layout, source: input, plan: plan)
        let out = try writer.build()
        result.notes += Array(Set(writer.notes).sorted { $0.code < $1.code })
        result.ledger = try out.write(from: input, to: output)
        return result
    }

    public func verifyContent(original: any ByteSource, _ before: Layout, cleaned: any ByteSource, _ after: Layout, result: CleanResult) throws -> ContentCheck {
        switch (before, after) {
        case (.tiff(let before), .tiff(let after)):
            return try verifyTIFF(original: original, before, cleaned: cleaned, after)
        case (.raw(let before), .raw(let after)):
            return try RawTIFFFormat().verifyContent(original: original, before, cleaned: cleaned, after, result: result)
        default:
            return ContentCheck(method: "none", passed: false, detail: "the cleaned file is no longer the same kind of TIFF")
        }
    }

    private func verifyTIFF(original: any ByteSource, _ before: TIFFLayout, cleaned: any ByteSource, _ after: TIFFLayout) throws -> ContentCheck {
        let method = "strips/tiles byte-identical and structural tags unchanged, image by image"
        let left = try images(before, original), right = try images(after, cleaned)
        // Every page must survive in order; reduced images and SubIFDs may have been removed.
        var j = 0
        var identical = IdenticalRanges()
        for image in left {
            var compared = IdenticalRanges()
            if j < right.count, image.signature == right[j].signature, image.blocks.count == right[j].blocks.count,
               try zip(image.blocks, right[j].blocks).allSatisfy({
                   try ByteComparison.equal(original, $0.0, cleaned, $0.1, skipping: [], proving: &compared)
               }) {
                for pair in compared.pairs { identical.add(pair.original, pair.cleaned) }
                j += 1
            } else if image.role == .page {
                return ContentCheck(method: method, passed: false, detail: "the image in \(image.path) is missing or differs")
            }
        }
        guard j == right.count else {
            return ContentCheck(method: method, passed: false, detail: "\(right.count - j) image(s) in the output do not match the original")
        }
        return ContentCheck(method: method, passed: true, identical: identical)
    }

    private struct Image {
        var role: TIFFLayout.Role
        var path: String
        /// Structural entries (tag, type, count, value) other than data offsets.
        var signature: [UInt8]
        var blocks: [Range<Int64>]
    }

    /// The images of a file in chain order, each followed by its SubIFD images.
    private func images(_ layout: TIFFLayout, _ source: any ByteSource) throws -> [Image] {
        var result: [Image] = []
        func visit(_ index: Int) throws {
            let node = layout.nodes[index]
            guard node.role.holdsImage else { return }
            var image = Image(role: node.role, path: node.path, signature: [], blocks: [])
            var children: [Int] = []
            for (entry, fate) in zip(node.ifd.entries, node.fates) {
                switch fate {
                case .structural:
                    image.signature += layout.structure.order.bytes(entry.tag) + layout.structure.order.bytes(entry.type)
                    image.signature += try layout.structure.bytes(source, entry)
                case .data(let ranges):
                    image.blocks += ranges
                case .pointer(let nodes) where entry.tag == TIFFScanner.subIFDsTag:
                    children += nodes
                default:
                    break
                }
            }
            result.append(image)
            try children.forEach(visit)
        }
        try layout.chain.forEach(visit)
        return result
    }
}
