// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

extension ExifItems {
    /// Bytes of an EXIF block that no IFD, entry value or thumbnail uses and that are not zero padding: a GPS IFD
    /// no pointer links, values an editor left behind. No reader shows them, yet a block copied whole would carry
    /// them; as an `unknown` item they make the block be written again from its entries. Returns the item's index.
    static func unreferenced(_ block: ExifBlock, raw: [UInt8], location: String, origin: Int64, namespace: String,
                             into items: inout [MetadataItem]) -> Int? {
        let wide = block.referenced.map { Int64($0.lowerBound)..<Int64($0.upperBound) }
        let gaps = ByteSplice.subtract([0..<Int64(raw.count)], wide).filter { gap in
            raw[Int(gap.lowerBound)..<Int(gap.upperBound)].contains { $0 != 0 }
        }
        guard let first = gaps.first, let last = gaps.last else { return nil }
        let total = gaps.reduce(0) { $0 + $1.count }
        items.append(MetadataItem(key: "\(namespace):unreferenced", category: .content, location: "\(location)/unreferenced",
                                  offset: origin + first.lowerBound, length: last.upperBound - first.lowerBound,
                                  detail: "\(total) bytes of the EXIF block no directory refers to", isUnknown: true))
        return items.count - 1
    }
}
