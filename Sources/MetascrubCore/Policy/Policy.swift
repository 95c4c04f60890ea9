// SPDX-License-Identifier: GPL-3.0-or-later

/// A declarative policy: per category and per key, keep, remove or fail.
///
/// Precedence, most specific first: an exact key, then the key pattern with the most literal characters,
/// then `unknown` for items the scanner does not recognise, then the item's category, then `default`.
/// Orientation tags are governed by `orientation` alone.
public struct Policy: Sendable, Equatable {
    public enum OrientationMode: String, Sendable, Codable, CaseIterable {
        /// Rotate/flip the coded image losslessly and drop the tag, but only when the result decodes to exactly
        /// the pixels the original displayed; otherwise keep a minimal orientation tag.
        case bake
        /// Rotate/flip losslessly whenever a perfect transform exists, accepting that decoders round the
        /// rotated blocks differently (a few levels); for pipelines that strip EXIF again later.
        case rotate
        /// Keep the orientation tag as it is.
        case keep
        /// Drop the tag even though the image will then display rotated.
        case drop
    }

    /// What to do with a damaged file whose metadata can still all be located (cut inside or after the coded
    /// data): clean it and copy the damaged remainder unchanged, or refuse it as unreadable.
    public enum DamagedMode: String, Sendable, Codable, CaseIterable {
        case clean
        case refuse
    }

    /// What to do when the scanner reports part of a file it could not walk (a PSD layer section, a maker note of
    /// an unlisted layout, an SEI unit too large to inspect): nothing there was listed, so nothing there is
    /// proven clean. `fail` (the default) refuses the file; `keep` cleans the rest and copies that part unlisted.
    public enum UnwalkedMode: String, Sendable, Codable, CaseIterable {
        case fail
        case keep
    }

    /// What becomes of a C2PA manifest (Content Credentials) the rules keep. A manifest's hard binding is a hash
    /// over the file's other bytes, so it survives a clean only if nothing it covers changes.
    public enum ProvenanceMode: String, Sendable, Codable, CaseIterable {
        /// Keep it only while nothing inside it is removed and its binding still validates after the clean;
        /// otherwise remove it, saying why.
        case keepValid = "keep-valid"
        /// Remove every manifest, whatever the key and category rules say.
        case remove
        /// Refuse the file rather than remove a manifest the rules keep (or keep one the clean would break).
        case fail
    }

    public static let schemaVersion = 1

    public var name: String
    public var description: String
    public var categories: [Category: Disposition]
    public var keys: [KeyPattern: Disposition]
    public var unknown: Disposition
    public var fallback: Disposition
    public var orientation: OrientationMode
    public var allowReencode: Bool
    /// Convert images that have a decoder (HEIC/HEIF/AVIF) to this format while cleaning (`convert:`).
    public var convert: ConversionTarget?
    /// Lowest PSNR (dB) a re-encoded image may have against the source's displayed render (`min-psnr:`);
    /// below it the file fails and nothing is written.
    public var minimumPSNR: Double = Policy.defaultMinimumPSNR
    public var damaged: DamagedMode = .clean
    public var unwalked: UnwalkedMode = .fail
    /// Content Credentials (`provenance:`); keep-valid unless the policy says otherwise.
    public var provenance: ProvenanceMode = .keepValid
    /// What becomes of an embedded item the policy says to `clean` but metascrub cannot clean (a thumbnail inside
    /// EXIF, a video after a photo, a file of a format without a cleaner): `remove` (the default) or `fail`.
    public var uncleanable: Disposition = .remove
    /// The most pixels a whole-image decode may have (`max-pixels:`, `--max-pixels`): above it an orientation
    /// bake keeps its tag with a reason and a re-encode or conversion is refused (a decompression bomb costs a
    /// header read). Near 100 MP by default.
    public var maxPixels: Int = Policy.defaultMaxPixels
    public static let defaultMaxPixels = 100_000_000
    /// SHA-256 of the policy's source text, so a report names exactly which rules were applied.
    public var digest: String

    public init(
        name: String, description: String = "", categories: [Category: Disposition] = [:],
        keys: [KeyPattern: Disposition] = [:], unknown: Disposition = .remove, fallback: Disposition = .remove,
        orientation: OrientationMode = .bake, allowReencode: Bool = false, digest: String = ""
    ) {
        self.name = name
        self.description = description
        self.categories = categories
        self.keys = keys
        self.unknown = unknown
        self.fallback = fallback
        self.orientation = orientation
        self.allowReencode = allowReencode
        self.digest = digest
    }

    /// Keys that carry the image's orientation; their fate is `orientation`, not the key or category rules.
    public static let orientationKeys: Set<String> = ["exif:Orientation", "xmp:tiff:Orientation"]

    /// The decision for one item, ignoring its parent. `clean` of an item that is no embedded file metascrub can
    /// look into becomes what `uncleanable` says.
    public func decide(_ item: MetadataItem) -> (Disposition, rule: String) {
        let (disposition, rule) = ruleDecision(item)
        guard disposition == .clean, item.embeddedFormat == nil else { return (disposition, rule) }
        return (uncleanable, "\(rule) (clean: not an embedded file metascrub can clean)")
    }

    private func ruleDecision(_ item: MetadataItem) -> (Disposition, rule: String) {
        if Self.orientationKeys.contains(item.key) {
            switch orientation {
            case .bake: return (.bake, "orientation bake")
            case .rotate: return (.bake, "orientation rotate")
            case .keep: return (.keep, "orientation keep")
            case .drop: return (.remove, "orientation drop")
            }
        }
        if let (pattern, disposition) = bestKeyMatch(item.key) {
            return (disposition, "key \(pattern.text)")
        }
        if item.isUnknown { return (unknown, "unknown") }
        if let disposition = categories[item.category] { return (disposition, "category \(item.category.rawValue)") }
        return (fallback, "default")
    }

    private func bestKeyMatch(_ key: String) -> (KeyPattern, Disposition)? {
        var best: (KeyPattern, Disposition)?
        for (pattern, disposition) in keys where pattern.matches(key) {
            if let current = best, current.0.specificity >= pattern.specificity {
                // Equal specificity: the stricter decision wins, so ambiguity never leaks.
                if current.0.specificity == pattern.specificity, disposition.strictness > current.1.strictness {
                    best = (pattern, disposition)
                }
                continue
            }
            best = (pattern, disposition)
        }
        return best
    }

    /// Decide every item of a scan. A block (an item other items name as `parent`) is removed when any item
    /// inside it is removed, and fails when any fails: keeping a block must never keep what the policy removes.
    /// An embedded file (`embeddedFormat` set) is the exception: kept or `clean`, it is cleaned inside by its own
    /// handler instead, and one with nothing inside to remove is simply kept. So is a kept block whose removed
    /// item is `separable`: its handler writes the block again without that item.
    public func evaluate(_ items: [MetadataItem]) -> [Finding] {
        var findings = items.map { item -> Finding in
            let (disposition, rule) = decide(item)
            return Finding(item: item, disposition: disposition, rule: rule)
        }
        // Children can nest (maker-note entries inside a maker note inside EXIF); walk up from each child.
        for index in findings.indices {
            var parent = findings[index].item.parent
            var depth = 0
            while let p = parent, findings.indices.contains(p), depth < 64 {
                let child = findings[index].disposition
                let childRemoves = child == .remove || child == .bake || child == .clean
                let cleansInside = findings[p].item.embeddedFormat != nil
                if child == .remove, findings[index].item.separable, p == findings[index].item.parent,
                   findings[p].disposition == .keep {
                    // Written again without the child; the blocks above keep only what they held.
                    let mark = "; rebuilt without "
                    findings[p].rule += findings[p].rule.contains(mark) ? ", " : mark
                    findings[p].rule += findings[index].item.key
                    break
                }
                if child == .fail, findings[p].disposition != .fail {
                    findings[p].disposition = .fail
                    findings[p].rule = "contains \(findings[index].item.key)"
                } else if childRemoves, findings[p].disposition == .keep, cleansInside {
                    findings[p].disposition = .clean
                    findings[p].rule = "\(findings[p].rule); cleaned inside: contains \(findings[index].item.key)"
                } else if childRemoves, findings[p].disposition == .keep, !isBakeOnlyChild(findings[index]) {
                    findings[p].disposition = .remove
                    findings[p].rule = "contains \(findings[index].item.key)"
                }
                parent = findings[p].item.parent
                depth += 1
            }
        }
        // Children of a removed block go with it.
        for index in findings.indices {
            var parent = findings[index].item.parent
            var depth = 0
            while let p = parent, findings.indices.contains(p), depth < 64 {
                if findings[p].disposition == .remove, findings[index].disposition.survives {
                    findings[index].disposition = .remove
                    findings[index].rule = "inside \(findings[p].item.key)"
                }
                parent = findings[p].item.parent
                depth += 1
            }
        }
        return Self.keepingCleanFiles(findings)
    }

    /// An embedded file to `clean` that holds nothing the policy removes is kept as it is: cleaning it would
    /// change nothing, and a clean must be a fixed point. Run again after a handler settles its decisions.
    public static func keepingCleanFiles(_ findings: [Finding]) -> [Finding] {
        guard findings.contains(where: { $0.disposition == .clean }) else { return findings }
        var settled = findings
        var busy = Set<Int>()
        // Children come after their parents in a scan's list: walking backwards settles the innermost file first.
        for index in settled.indices.reversed() {
            if settled[index].disposition == .clean, !busy.contains(index) { settled[index].disposition = .keep }
            guard settled[index].disposition != .keep else { continue }
            var parent = settled[index].item.parent
            var depth = 0
            while let p = parent, settled.indices.contains(p), depth < 64, !busy.contains(p) {
                busy.insert(p)
                parent = settled[p].item.parent
                depth += 1
            }
        }
        return settled
    }

    /// An orientation tag being baked does not force its whole block out: the cleaner rewrites the block.
    private func isBakeOnlyChild(_ finding: Finding) -> Bool {
        finding.disposition == .bake || (Self.orientationKeys.contains(finding.item.key) && orientation == .drop)
    }
}

extension Disposition {
    /// Used to break ties between equally specific patterns.
    var strictness: Int {
        switch self {
        case .keep: 0
        case .clean: 1
        case .bake: 2
        case .remove: 3
        case .fail: 4
        }
    }
}
