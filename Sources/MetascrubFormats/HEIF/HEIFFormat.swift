// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// HEIF, HEIC, AVIF and camera `.HIF` files: item-level remux. Removed items leave `iinf`, `iloc`, `iref`, `ipma`
/// and their bytes leave `mdat`/`idat`; the coded image data of kept items is copied byte for byte, and
/// `irot`/`imir`/`clap` are kept so the image displays the same.
public struct HEIFFormat: FormatHandler {
    /// Names the format in errors and notes ("HEIF", "AVIF").
    public let formatName: String

    public init(formatName: String = "HEIF") { self.formatName = formatName }

    public func scan(_ input: any ByteSource, options: ScanOptions) throws -> ScanResult<HEIFLayout> {
        try HEIFScanner.scan(input, format: formatName, options: options)
    }

    public func clean(_ input: any ByteSource, scan: ScanResult<HEIFLayout>, plan: CleanPlan, to output: any OutputSink) throws -> CleanResult {
        let layout = scan.layout
        var cleaner = HEIFCleaner(source: input, layout: layout, plan: plan)
        return try cleaner.run(to: output)
    }

    public func verifyContent(original: any ByteSource, _ before: HEIFLayout, cleaned: any ByteSource, _ after: HEIFLayout, result: CleanResult) throws -> ContentCheck {
        return try HEIFVerifier.verify(original: original, before, cleaned: cleaned, after)
    }

    /// The primary image is the picture itself: a policy that would remove its item (by category or as an
    /// unknown) keeps it, and says so, in scan and clean alike. A property the policy keeps (a gain map's colour
    /// profile) that only images the clean removes use goes with them, so scan predicts what clean does.
    public func settle(_ findings: [Finding], input: any ByteSource, scan: ScanResult<HEIFLayout>, policy: Policy) throws -> [Finding] {
        let layout = scan.layout
        var settled = findings
        for (id, role) in layout.roles where role == .primary {
            if let owner = layout.itemOwner[id] { settled.keep(owner, because: "the primary image is the picture itself") }
        }
        let removed = Set(layout.itemOwner.filter { settled.indices.contains($0.value) && settled[$0.value].disposition != .keep }.keys)
        guard !removed.isEmpty, let closed = try? HEIFItemGraph.removals(starting: removed, layout) else { return settled }
        var users: [Int: Set<UInt32>] = [:]
        for pair in layout.meta.associations {
            for entry in pair.value.entries { for a in entry.associations { users[a.index, default: []].insert(entry.id) } }
        }
        for (index, owner) in layout.propertyOwner where settled.indices.contains(owner) && settled[owner].disposition == .keep {
            guard let used = users[index], !used.isEmpty, used.isSubset(of: closed) else { continue }
            settled[owner].disposition = .remove
            settled[owner].rule = "with the image it describes"
        }
        return settled
    }
}
