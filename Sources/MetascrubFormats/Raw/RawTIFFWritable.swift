// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

extension RawTIFFLayout {
    /// Every range the in-place cleaner may write to, sorted, whatever the plan: the IFD tables it may rewrite,
    /// the values it may zero (never inside image data outside its holes, as in `RawTIFFPatcher`), the fields
    /// it may blank and the XMP packets it may rewrite. Verification proves every other byte identical.
    func writable(in source: any ByteSource) throws -> [Range<Int64>] {
        var tables: [Range<Int64>] = []
        var zero: [Range<Int64>] = []
        var blank: [Range<Int64>] = []
        func table(_ ifd: Int64, _ order: ByteOrder) throws {
            let count = Int64(order.u16(try source.read(at: ifd, count: 2), 0))
            tables.append(ifd..<ifd + 2 + count * 12 + 4)
        }
        for action in actions.values {
            switch action {
            case .drop(let ifd, _, let ranges, let order):
                try table(ifd, order ?? structure.order)
                zero += ranges
            case .blank(let range), .overwrite(let range, _):
                blank.append(range)
            }
        }
        blank += nikon.flatMap { $0.blocks.map(\.enciphered) }
        for block in xmp {
            blank.append(block.value)
            if let ifd = block.ifd { try table(ifd, structure.order) }
        }
        let protected = ByteSplice.subtract(imageData, holes)
        return ByteSplice.union(tables + blank + ByteSplice.subtract(zero, protected))
    }
}
