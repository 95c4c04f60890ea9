// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// JPEG XL: box-level remux of the container form. The codestream boxes (`jxlc`, `jxlp`) and the level and
/// frame-index boxes are copied byte for byte; metadata boxes are dropped or rebuilt. A bare codestream has no
/// metadata boxes, so there is nothing to remove.
public struct JXLFormat: FormatHandler {
    public init() {}

    public func scan(_ input: any ByteSource, options: ScanOptions) throws -> ScanResult<JXLLayout> {
        try JXLScanner.scan(input, options: options)
    }

    public func clean(_ input: any ByteSource, scan: ScanResult<JXLLayout>, plan: CleanPlan, to output: any OutputSink) throws -> CleanResult {
        let layout = scan.layout
        var result = CleanResult(method: .remux)
        guard !layout.bare else {
            var out = OutputPlan()
            out.copy(0..<input.size, because: .codedData)
            result.ledger = try out.write(from: input, to: output)
            return result
        }
        // What each box becomes: copied, rebuilt, or dropped (nil).
        var kept: [Int: [UInt8]?] = [:]
        var metadataChanged = false
        for (i, box) in layout.boxes.enumerated() {
            if let content = layout.embedded[i] {
                switch try content.apply(plan: plan, notes: &result.notes) {
                case .unchanged: kept[i] = .some(nil)
                case .removed: metadataChanged = true
                case .rebuilt(let bytes):
                    metadataChanged = true
                    kept[i] = BoxWriter.box(box.type, bytes)
                }
            } else if let owner = layout.boxOwner[i] {
                if plan.keeps(owner) {
                    kept[i] = .some(nil)
                } else if ["jumb", "brob"].contains(box.type) {
                    metadataChanged = true
                }
            } else if box.type != "free", box.type != "skip" {
                kept[i] = .some(nil) // structure and codestream; zero padding goes
            }
        }
        // JPEG reconstruction data refers to the Exif/XMP/JUMBF boxes it came with; once they change it could only
        // rebuild a broken JPEG, so it goes too (the JPEG XL image itself is unchanged).
        let reconstruction = layout.boxes.indices.filter { layout.boxes[$0].type == JXLLayout.reconstruction && kept[$0] != nil }
        if metadataChanged, !reconstruction.isEmpty {
            for i in reconstruction {
                kept[i] = nil
                if let owner = layout.boxOwner[i] { result.outcomes[owner] = .removed }
            }
            result.notes.append(Note(.info, code: "jxl-reconstruction-dropped",
                                     "JPEG reconstruction data was removed with the metadata it refers to; the JPEG XL image is unchanged"))
        }
        var out = OutputPlan()
        for (i, box) in layout.boxes.enumerated() {
            guard let fate = kept[i] else { continue }
            if let rebuilt = fate {
                out.append(rebuilt)
            } else if JXLLayout.codestream.contains(box.type) {
                out.copy(box.offset..<box.payloadRange.lowerBound, because: .structure)
                out.copy(box.payloadRange, because: .codedData)
            } else if let owner = layout.boxOwner[i] {
                out.copy(box.range, because: .keptItem(owner))
            } else {
                out.copy(box.range, because: .structure)
            }
        }
        if let trailer = layout.trailer, let owner = layout.trailerItem, plan.keeps(owner) {
            out.copy(trailer, because: .keptItem(owner))
        }
        result.ledger = try out.write(from: input, to: output)
        return result
    }

    public func verifyContent(original: any ByteSource, _ before: JXLLayout, cleaned: any ByteSource, _ after: JXLLayout, result: CleanResult) throws -> ContentCheck {
        let method = "codestream boxes (jxlc/jxlp/jxll/jxli) byte-identical and in the same order"
        if before.bare || after.bare {
            var identical = IdenticalRanges()
            let same = try before.bare == after.bare && original.size == cleaned.size
                && ByteComparison.equal(original, 0..<original.size, cleaned, 0..<cleaned.size, skipping: [], proving: &identical)
            return ContentCheck(method: "bare codestream byte-identical", passed: same, identical: identical)
        }
        let a = before.boxes.filter { JXLLayout.codestream.contains($0.type) }
        let b = after.boxes.filter { JXLLayout.codestream.contains($0.type) }
        guard a.count == b.count, !a.isEmpty else {
            return ContentCheck(method: method, passed: false, detail: "\(a.count) codestream boxes became \(b.count)")
        }
        var identical = IdenticalRanges()
        for (x, y) in zip(a, b) {
            guard x.type == y.type, x.payloadSize == y.payloadSize,
                  try ByteComparison.equal(original, x.payloadRange, cleaned, y.payloadRange, skipping: [], proving: &identical) else {
                return ContentCheck(method: method, passed: false, detail: "\(x.type) at \(x.offset) differs")
            }
        }
        return ContentCheck(method: method, passed: true, identical: identical)
    }
}
