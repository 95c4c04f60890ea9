// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// Field-by-field checks of the JP2 header boxes a decoder reads (ISO/IEC 15444-1 I.5.3): each is copied as it is,
/// so each must hold exactly its fields and nothing else where a writer could hide bytes.
enum JP2HeaderFields {
    static func check(_ box: Box, reader: BoxReader) throws {
        guard box.payloadSize <= 1 << 24 else {
            throw MetascrubError.limitExceeded(format: JP2Scanner.format, path: box.path, offset: box.offset,
                limit: "16 MB header box")
        }
        let b = try reader.payload(of: box)
        func fail(_ reason: String) -> MetascrubError {
            .malformed(format: JP2Scanner.format, path: box.path, offset: box.offset, reason: reason)
        }
        switch box.type {
        case "ihdr":
            // height, width, components, bits per component, compression type 7, colourspace unknown, IPR flag
            guard b.count == 14, b[11] == 7, b[12] <= 1,
                b[13] <= 1 else { throw fail("image header is not 14 bytes of known fields") }
        case "colr":
            guard b.count >= 3 else { throw fail("colour specification too short") }
            switch b[0] {
            case 1: guard b.count == 7 else { throw fail("enumerated colour space is not 7 bytes") }
            // An ICC profile: rendering data, kept like every other format's profile.
            case 2, 3: guard b.count > 3 + 128 else { throw fail("ICC colour specification without a profile") }
            default: throw fail("colour specification method \(b[0])")
            }
        case "bpcc":
            guard !b.isEmpty else { throw fail("empty bits-per-component box") }
        case "pclr":
            guard b.count >= 3 else { throw fail("palette too short") }
            let entries = BigEndian.u16(b, 0), columns = Int(b[2])
            guard columns > 0, b.count >= 3 + columns else { throw fail("palette without columns") }
            let bytesPerEntry = b[3..<(3 + columns)].reduce(0) { $0 + (Int($1 & 0x7F) + 8) / 8 }
            guard b.count == 3 + columns + entries * bytesPerEntry else {
                throw fail("palette size does not match its entries")
            }
        case "cmap":
            guard !b.isEmpty, b.count % 4 == 0 else { throw fail("component mapping is not whole entries") }
        case "cdef":
            guard b.count >= 2, b.count == 2 + 6 * BigEndian.u16(b,
                0) else { throw fail("channel definition does not match its count") }
        case "res ":
            let children = try reader.children(of: box, depth: 2)
            guard children.leftover == nil, children.boxes.allSatisfy({ ["resc",
                "resd"].contains($0.type) && $0.payloadSize == 10 }) else {
                throw fail("resolution box holds something other than resc/resd")
            }
        default:
            throw fail("not a header box")
        }
    }
}
