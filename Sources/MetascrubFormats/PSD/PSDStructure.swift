// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// A Photoshop document (PSD, version 1) or large document (PSB, version 2): the 26-byte header and the four
/// length-prefixed sections that follow it (Adobe Photoshop File Formats Specification, "File Header Section"
/// onwards). Only the image resources section is parsed further; the layer-and-mask section and the image
/// data hold no absolute offsets, so they survive any change in the resources section's length when copied
/// byte for byte.
struct PSDStructure: Sendable {
    static let signature: [UInt8] = Array("8BPS".utf8)
    static let headerSize: Int64 = 26
    /// Larger resource sections are refused rather than read into memory.
    static let resourceLimit: Int64 = 256 << 20

    struct Resource: Sendable {
        var id: UInt16
        /// The whole block, from "8BIM" to its padding byte, in file offsets.
        var range: Range<Int64>
        /// The resource data (without the padding byte), in file offsets.
        var data: Range<Int64>
    }

    var isLarge: Bool
    var format: String { isLarge ? "PSB" : "PSD" }
    /// The colour-mode data section, length field included.
    var colorModeSection: Range<Int64>
    /// The image resources section, length field included.
    var resourceSection: Range<Int64>
    var resources: [Resource]
    /// From the layer-and-mask section's length field to the end of the composite image data: layers, masks,
    /// layer names, additional layer information and the composite.
    var layersAndImage: Range<Int64>
    /// Bytes after the composite image data (PhotoMechanic and other tools append IPTC there).
    var trailer: Range<Int64>?

    static func parse(_ source: any ByteSource) throws -> PSDStructure {
        let head = try source.read(at: 0, count: Int(headerSize), format: "PSD", path: "header")
        guard head.starts(with: signature) else {
            throw MetascrubError.malformed(format: "PSD", path: "header", offset: 0, reason: "no 8BPS signature")
        }
        let version = BigEndian.u16(head, 4)
        guard version == 1 || version == 2 else {
            throw MetascrubError.malformed(format: "PSD", path: "header", offset: 4, reason: "version \(version) is neither 1 (PSD) nor 2 (PSB)")
        }
        let format = version == 2 ? "PSB" : "PSD"
        let colorMode = try section(source, at: headerSize, format: format, path: "colour mode data")
        let resources = try section(source, at: colorMode.upperBound, format: format, path: "image resources")
        guard Int64(resources.count) - 4 <= resourceLimit else {
            throw MetascrubError.limitExceeded(format: format, path: "image resources", offset: resources.lowerBound, limit: "256 MiB of image resources")
        }
        // The layer-and-mask section must at least have its length field; everything after is copied whole.
        let layerLength = version == 2 ? 8 : 4
        guard resources.upperBound + Int64(layerLength) <= source.size else {
            throw MetascrubError.truncated(format: format, path: "layer and mask information", offset: resources.upperBound,
                                           needed: resources.upperBound + Int64(layerLength) - source.size)
        }
        let body = try source.read(at: resources.lowerBound + 4, count: resources.count - 4, format: format, path: "image resources")
        let lengthField = try source.read(at: resources.upperBound, count: layerLength, format: format, path: "layer and mask information")
        let layersLength = version == 2 ? Int64(clamping: TIFFStructure.u64(.big, lengthField, 0)) : Int64(BigEndian.u32(lengthField, 0))
        let imageStart = resources.upperBound + Int64(layerLength)
        guard layersLength <= source.size - imageStart else {
            throw MetascrubError.truncated(format: format, path: "layer and mask information", offset: resources.upperBound,
                                           needed: layersLength - (source.size - imageStart))
        }
        let imageEnd = try compositeEnd(source, head: head, at: imageStart + layersLength, large: version == 2, format: format)
        return PSDStructure(isLarge: version == 2, colorModeSection: colorMode, resourceSection: resources,
                            resources: try parseResources(body, origin: resources.lowerBound + 4, format: format),
                            layersAndImage: resources.upperBound..<imageEnd,
                            trailer: imageEnd < source.size ? imageEnd..<source.size : nil)
    }

    /// Where the composite image data ends: computed for raw and RLE data (the only ones whose length the file
    /// states); ZIP-compressed data runs to the end of the file.
    private static func compositeEnd(_ source: any ByteSource, head: [UInt8], at start: Int64, large: Bool, format: String) throws -> Int64 {
        let channels = Int64(BigEndian.u16(head, 12)), height = Int64(BigEndian.u32(head, 14))
        let width = Int64(BigEndian.u32(head, 18)), depth = Int64(BigEndian.u16(head, 22))
        // The specification's limits (56 channels, 30,000 pixels a side, 300,000 in a PSB) keep the sizes
        // below from overflowing.
        let side: Int64 = large ? 300_000 : 30_000
        guard (1...56).contains(channels), (1...side).contains(height), (1...side).contains(width), [1, 8, 16, 32].contains(depth) else {
            throw MetascrubError.malformed(format: format, path: "header", offset: 12,
                                           reason: "\(channels) channels of \(width)x\(height) at \(depth) bits is outside the format's limits")
        }
        let compression = BigEndian.u16(try source.read(at: start, count: 2, format: format, path: "image data"), 0)
        let rows = channels * height
        let end: Int64
        switch compression {
        case 0:
            end = start + 2 + rows * ((width * depth + 7) / 8)
        case 1:
            let unit: Int64 = large ? 4 : 2
            guard rows * unit <= source.size - start - 2 else {
                throw MetascrubError.truncated(format: format, path: "image data (RLE row lengths)", offset: start, needed: start + 2 + rows * unit - source.size)
            }
            let counts = try source.read(at: start + 2, count: Int(rows * unit), format: format, path: "image data (RLE row lengths)")
            var total = start + 2 + rows * unit
            for row in 0..<Int(rows) { total += Int64(large ? BigEndian.u32(counts, row * 4) : BigEndian.u16(counts, row * 2)) }
            end = total
        default:
            return source.size
        }
        guard end <= source.size else {
            throw MetascrubError.truncated(format: format, path: "image data", offset: start, needed: end - source.size)
        }
        return end
    }

    /// A section with a 4-byte big-endian length, checked against the file.
    private static func section(_ source: any ByteSource, at offset: Int64, format: String, path: String) throws -> Range<Int64> {
        let length = Int64(BigEndian.u32(try source.read(at: offset, count: 4, format: format, path: path), 0))
        guard length <= source.size - offset - 4 else {
            throw MetascrubError.truncated(format: format, path: path, offset: offset, needed: offset + 4 + length - source.size)
        }
        return offset..<offset + 4 + length
    }

    /// Image resource blocks: "8BIM", id, even-padded Pascal name, 4-byte size, data padded to even length.
    /// Anything that does not parse is an error: a block the cleaner cannot delimit could hold anything.
    static func parseResources(_ b: [UInt8], origin: Int64, format: String) throws -> [Resource] {
        var result: [Resource] = []
        var at = 0
        while at < b.count {
            func fail(_ reason: String) -> MetascrubError {
                .malformed(format: format, path: "image resources/#\(result.count)", offset: origin + Int64(at), reason: reason)
            }
            // Some writers pad the section with zeros after the last block.
            if b[at...].allSatisfy({ $0 == 0 }) { break }
            guard at + 12 <= b.count else { throw fail("image resource block cut short") }
            guard b[at..<at + 4].elementsEqual(Array("8BIM".utf8)) else { throw fail("image resource without the 8BIM signature") }
            let id = UInt16(BigEndian.u16(b, at + 4))
            let nameLength = Int(b[at + 6])
            let sizeAt = at + 6 + (1 + nameLength + 1) / 2 * 2
            guard sizeAt + 4 <= b.count else { throw fail("image resource name runs past the section") }
            let size = BigEndian.u32(b, sizeAt)
            let dataStart = sizeAt + 4
            guard size <= b.count - dataStart else { throw fail("image resource data runs past the section") }
            let end = min(b.count, dataStart + size + size % 2)
            result.append(Resource(id: id, range: origin + Int64(at)..<origin + Int64(end),
                                   data: origin + Int64(dataStart)..<origin + Int64(dataStart + size)))
            at = end
        }
        return result
    }
}
