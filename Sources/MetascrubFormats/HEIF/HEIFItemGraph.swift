// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// Which items must go with the ones the policy removes, so the rewritten file stays consistent: a derived
/// image whose input is gone (a tone-map image without its gain map), thumbnails and auxiliary images of
/// removed images, and tiles no remaining image uses.
enum HEIFItemGraph {
    /// The closed set of removed items, or an error when the primary image would lose something it needs.
    /// A worklist: only the neighbours of a newly removed item are looked at again, so it is linear in the
    /// number of references.
    static func removals(starting removed: Set<UInt32>, _ layout: HEIFLayout) throws -> Set<UInt32> {
        let links = layout.meta.links
        let protected = layout.protectedItems
        if let needed = removed.intersection(protected).min() {
            throw MetascrubError.unsupported(format: layout.format, reason: "the primary image needs item \(needed), which the policy removes; nothing was written")
        }
        var out = removed
        var queue = Array(removed)
        func mustGo(_ id: UInt32) -> Bool {
            let inputs = links.targets(of: id, ItemReferenceBox.derivedImage)
            let describes = links.targets(of: id, ItemReferenceBox.thumbnail) + links.targets(of: id, ItemReferenceBox.auxiliary)
            let users = links.sources(of: id, ItemReferenceBox.derivedImage)
            return inputs.contains(where: out.contains)
                || (!describes.isEmpty && describes.allSatisfy(out.contains))
                || (layout.roles[id] == .input && !users.isEmpty && users.allSatisfy(out.contains))
        }
        while let gone = queue.popLast() {
            for id in links.neighbours(of: gone) where !out.contains(id) && layout.meta.item(id) != nil && mustGo(id) {
                if protected.contains(id) {
                    throw MetascrubError.unsupported(format: layout.format, reason: "the primary image needs item \(id), which would have to go with removed items; nothing was written")
                }
                out.insert(id)
                queue.append(id)
            }
        }
        return out
    }
}
