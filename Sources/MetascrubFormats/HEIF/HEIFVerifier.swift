// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubNative

/// Checks that a cleaned HEIF/AVIF file shows exactly what the original showed: every kept image item has
/// the same coded bytes, derivation inputs and rendering properties, and libheif decodes the same primary image.
enum HEIFVerifier {
    /// Properties that change how an image decodes or displays (the ones a cleaner must never touch).
    static let renderingProperties: Set<FourCC> = [
        "hvcC", "av1C", "avcC", "vvcC", "jpgC", "lhvC", "oinf", "tols", "ispe", "irot", "imir", "clap", "pixi", "auxC",
        "rloc", "lsel", "a1op", "a1lx", "pasp", "clli", "mdcv", "uncC", "cmpd",
    ]

    static func verify(original: any ByteSource, _ a: HEIFLayout, cleaned: any ByteSource, _ b: HEIFLayout) throws -> ContentCheck {
        var method = "coded data, derivation inputs and rendering properties of every kept image item byte-identical"
        func fail(_ detail: String) -> ContentCheck { ContentCheck(method: method, passed: false, detail: detail) }
        guard a.primaryID == b.primaryID else { return fail("the primary item changed from \(a.primaryID) to \(b.primaryID)") }
        var compared = 0
        var identical = IdenticalRanges()
        for item in b.meta.items where item.isImage || b.roles[item.id] == .input {
            let id = item.id
            guard let old = a.meta.item(id), old.type == item.type else { return fail("item \(id) is not the same item as before") }
            switch (a.data[id], b.data[id]) {
            case (nil, nil): break
            case (let x?, let y?):
                guard x.length == y.length else { return fail("item \(id) changed size") }
                // A cut file's last item may run past the end (damaged input): what is there is compared, and
                // the same amount must be missing from both.
                let (xs, ys) = (present(x.ranges, original.size), present(y.ranges, cleaned.size))
                guard x.length - lengthOf(xs) == y.length - lengthOf(ys) else { return fail("item \(id) lost or gained coded data") }
                guard try sameBytes(original, xs, cleaned, ys, proven: &identical) else { return fail("coded data of item \(id) differs") }
            default: return fail("item \(id) lost or gained its data")
            }
            guard a.meta.links.targets(of: id, ItemReferenceBox.derivedImage) == b.meta.links.targets(of: id, ItemReferenceBox.derivedImage) else {
                return fail("derivation inputs of item \(id) changed")
            }
            guard try renderingProperties(original, a, id) == renderingProperties(cleaned, b, id) else {
                return fail("rendering properties of item \(id) changed")
            }
            compared += 1
        }
        method = "coded data, derivation inputs and rendering properties of \(compared) kept image item\(compared == 1 ? "" : "s") byte-identical"
        // The same coded bytes, derivations and rendering properties decode to the same picture; decoding both
        // (seconds for a 12 MP HEVC image) would prove nothing more.
        var check = ContentCheck(method: method, passed: true)
        // The coded data just compared is the residue proof's to skip, as a JPEG's entropy-coded data is: searching
        // it again was most of a HEIC batch's CPU (issue 25, round 3).
        check.identical = identical.pairs
        return check
    }

    /// The bytes of an item's rendering properties (and non-ICC `colr`), with their essential flags, in order.
    static func renderingProperties(_ source: any ByteSource, _ layout: HEIFLayout, _ id: UInt32) throws -> [[UInt8]] {
        try layout.meta.propertyBoxes(of: id).compactMap { index, box, essential in
            let isColour = box.type == "colr" && layout.colourTypes[index].map { $0 != "prof" && $0 != "rICC" } ?? false
            guard renderingProperties.contains(box.type) || isColour else { return nil }
            return [essential ? 1 : 0] + (try source.read(at: box.offset, count: Int(box.size)))
        }
    }

    /// The parts of `ranges` inside a file of `size` bytes.
    static func present(_ ranges: [Range<Int64>], _ size: Int64) -> [Range<Int64>] {
        ranges.compactMap { $0.lowerBound < size ? $0.lowerBound..<min($0.upperBound, size) : nil }
    }

    static func lengthOf(_ ranges: [Range<Int64>]) -> Int64 { ranges.reduce(0) { $0 + Int64($1.count) } }

    /// Whether two lists of ranges hold the same bytes, compared piece by piece where the extents of both line up
    /// (memcmp over lent buffers: copying into arrays and comparing element by element was the top CPU entry of a
    /// HEIC batch, perf, issue 19).
    /// Each pair of pieces found equal is added to `proven`.
    static func sameBytes(_ a: any ByteSource, _ x: [Range<Int64>], _ b: any ByteSource, _ y: [Range<Int64>],
                          proven: inout IdenticalRanges) throws -> Bool {
        var left = x.filter { !$0.isEmpty }[...], right = y.filter { !$0.isEmpty }[...]
        while let l = left.first, let r = right.first {
            let n = min(Int64(l.count), Int64(r.count))
            guard try ByteComparison.equal(a, l.lowerBound..<l.lowerBound + n, b, r.lowerBound..<r.lowerBound + n) else { return false }
            proven.add(l.lowerBound..<l.lowerBound + n, r.lowerBound..<r.lowerBound + n)
            left[left.startIndex] = (l.lowerBound + n)..<l.upperBound
            right[right.startIndex] = (r.lowerBound + n)..<r.upperBound
            if left.first!.isEmpty { left = left.dropFirst() }
            if right.first!.isEmpty { right = right.dropFirst() }
        }
        return left.isEmpty && right.isEmpty
    }
}
