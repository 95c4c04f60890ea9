// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

extension ExifItems {
    /// Bytes of an EXIF block that no IFD, entry value or thumbnail uses and that are not zero padding: a GPS IFD
    /// no pointer links, values an editor left behind. No reader shows them, yet a block copied whole would carry
    /// them; as an `unknown` item they are zeroed where they are (or go with a rebuilt block). Returns the item's
    /// index and the block with them zeroed.
    static func unreferenced(_ block: ExifBlock, raw: [UInt8], location: String, origin: Int64, namespace: String,
                             into items: inout [MetadataItem]) -> (Int?, [UInt8]?) {
        let wide = block.referenced.map { Int64($0.lowerBound)..<Int64($0.upperBound) }
        let gaps = ByteSplice.subtract([0..<Int64(raw.count)], wide).filter { gap in
            raw[Int(gap.lowerBound)..<Int(gap.upperBound)].contains { $0 != 0 }
        }
        guard let first = gaps.first, let last = gaps.last else { return (nil, nil) }
        let total = gaps.reduce(0) { $0 + $1.count }
        items.append(MetadataItem(key: "\(namespace):unreferenced", category: .content,
                                  location: "\(location)/unreferenced", offset: origin + first.lowerBound,
                                  length: last.upperBound - first.lowerBound,
                                  detail: "\(total) bytes of the EXIF block no directory refers to", isUnknown: true))
        var blanked = raw
        for gap in gaps {
            blanked.replaceSubrange(Int(gap.lowerBound)..<Int(gap.upperBound), with: repeatElement(0, count: gap.count))
        }
        return (items.count - 1, blanked)
    }
}
