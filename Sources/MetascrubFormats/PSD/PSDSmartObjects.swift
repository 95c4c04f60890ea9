// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// A smart object's embedded file looked into by its own handler (`EmbeddedFile`): its items are listed under
/// the smart object's, so the policy decides them. The layer section is not rewritten, so what the policy
/// removes from the file is overwritten with zeros in place: a JPEG's metadata segments when everything to remove
/// lies in them (the JPEG still decodes to the same pixels), otherwise the whole file's data. Never is a smart
/// object reported cleaned with a position left inside.
struct PSDSmartObject: Sendable {
    /// The `psd:linkedFile` item.
    var item: Int
    /// The embedded file's bytes in the document.
    var data: Range<Int64>
    /// Its metadata segments (JPEG only) that can be blanked in place, in file offsets.
    var segments: [Range<Int64>]
    /// The embedded file as its own handler scanned it; its items are `file.children` in the document's list.
    var file: EmbeddedFile

    /// Scans the file at `data` as a file of its own. A JPEG whose metadata segments were blanked by an earlier
    /// clean is looked at without them (they are zeros, not metadata), so a clean stays a fixed point.
    static func itemise(_ source: any ByteSource, data: Range<Int64>, item: Int, segments: [Range<Int64>],
                        into found: inout ItemCollector) throws -> PSDSmartObject? {
        guard data.count >= 8, data.count <= EmbeddedFile.sizeLimit else { return nil }
        let bytes = try source.read(at: data.lowerBound, count: Int(data.count))
        let (view, cut) = withoutBlankSegments(bytes)
        let before = found.embedded.count
        guard found.embeddedFile(view, item: item, origin: cut ? nil : data.lowerBound), found.embedded.count > before else { return nil }
        return PSDSmartObject(item: item, data: data, segments: segments, file: found.embedded[before])
    }

    /// The smart object stays (`PSDFormat.settle`), so its file's items are decided as those of a file of its own,
    /// not swept out with it.
    func settle(_ findings: inout [Finding], policy: Policy) {
        for (k, decided) in policy.evaluate(file.scan.items).enumerated() where findings.indices.contains(file.children.lowerBound + k) {
            findings[file.children.lowerBound + k].disposition = decided.disposition
            findings[file.children.lowerBound + k].rule = decided.rule
        }
    }

    /// The ranges a clean overwrites with zeros for this smart object under `plan`.
    func zeroed(_ plan: CleanPlan, items: [MetadataItem]) -> [Range<Int64>] {
        let removed = file.children.filter { !plan.keeps($0) }
        guard !removed.isEmpty else { return [] }
        let inSegments = removed.allSatisfy { index in
            guard let offset = items[index].offset else { return false }
            return segments.contains { $0.contains(offset) }
        }
        return inSegments ? segments : [data]
    }

    /// A JPEG without the APPn/COM segments whose payload is all zeros; other files as they are.
    static func withoutBlankSegments(_ bytes: [UInt8]) -> ([UInt8], cut: Bool) {
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return (bytes, false) }
        var out: [UInt8] = [0xFF, 0xD8]
        var at = 2, cut = false
        while at + 4 <= bytes.count, bytes[at] == 0xFF {
            let marker = bytes[at + 1]
            if marker == 0xDA || marker == 0xD9 || marker == 0xFF || marker == 0x01 || (0xD0...0xD7).contains(marker) { break }
            let length = Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
            guard length >= 2, at + 2 + length <= bytes.count else { break }
            let isMetadata = (0xE1...0xEF).contains(marker) || marker == 0xFE
            if isMetadata, bytes[(at + 4)..<(at + 2 + length)].allSatisfy({ $0 == 0 }) {
                cut = true
            } else {
                out += bytes[at..<at + 2 + length]
            }
            at += 2 + length
        }
        return cut ? (out + bytes[at...], true) : (bytes, false)
    }
}
