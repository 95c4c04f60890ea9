// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubNative

/// The chunk list of a PNG/APNG file (PNG 3rd edition §5), every length checked against the file and every
/// CRC computed. Chunk data is read only to compute the CRC; nothing is kept in memory.
struct PNGStructure {
    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    static let maxChunks = 1 << 20
    /// The PNG specification's limit on a chunk's length.
    static let maxChunkLength: Int64 = 0x7FFF_FFFF

    struct Chunk {
        var type: String
        /// Offset of the length field.
        var offset: Int64
        /// Length of the data field.
        var length: Int64
        var crcMatches: Bool

        var dataOffset: Int64 { offset + 8 }
        /// Length field, type, data and CRC.
        var totalLength: Int64 { length + 12 }
        var end: Int64 { offset + totalLength }
        var range: Range<Int64> { offset..<end }
        /// Bit 5 of the first letter: lower case means a decoder may ignore the chunk.
        var isAncillary: Bool { type.utf8.first.map { $0 & 0x20 != 0 } ?? true }
    }

    struct Header {
        var width: Int
        var height: Int
        var bitDepth: Int
        var colorType: Int
        var interlaced: Bool

        var channels: Int? {
            switch colorType {
            case 0: 1
            case 2: 3
            case 3: 1
            case 4: 2
            case 6: 4
            default: nil
            }
        }
    }

    var chunks: [Chunk] = []
    var header: Header
    var iendIndex: Int
    var fileSize: Int64

    /// Bytes after IEND.
    var trailer: Range<Int64>? {
        let end = chunks[iendIndex].end
        return end < fileSize ? end..<fileSize : nil
    }

    var isAnimated: Bool { chunks.contains { $0.type == "acTL" } }

    static func parse(_ source: any ByteSource) throws -> PNGStructure {
        let format = "PNG"
        let signature = try source.read(at: 0, count: 8, format: format, path: "signature")
        guard signature == Self.signature else {
            throw MetascrubError.malformed(format: format, path: "signature", offset: 0, reason: "not a PNG signature")
        }
        var chunks: [Chunk] = []
        var position: Int64 = 8
        var header: Header?
        while true {
            guard chunks.count < maxChunks else {
                throw MetascrubError.limitExceeded(format: format, path: "chunk list", offset: position, limit: "\(maxChunks) chunks")
            }
            let head = try source.read(at: position, count: 8, format: format, path: "chunk header #\(chunks.count)")
            let length = Int64(BigEndian.u32(head, 0))
            let typeBytes = Array(head[4..<8])
            guard typeBytes.allSatisfy({ (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }) else {
                throw MetascrubError.malformed(format: format, path: "chunk #\(chunks.count)", offset: position + 4,
                                               reason: "chunk type is not four ASCII letters")
            }
            let type = String(decoding: typeBytes, as: UTF8.self)
            guard length <= maxChunkLength else {
                throw MetascrubError.malformed(format: format, path: "\(type) chunk", offset: position,
                                               reason: "length \(length) exceeds the PNG maximum of 2^31-1")
            }
            guard position + 12 + length <= source.size else {
                throw MetascrubError.truncated(format: format, path: "\(type) chunk #\(chunks.count)", offset: position,
                                               needed: position + 12 + length - source.size)
            }
            let crcMatches = try Self.crcMatches(source, typeBytes: typeBytes, dataAt: position + 8, length: length)
            let chunk = Chunk(type: type, offset: position, length: length, crcMatches: crcMatches)
            if chunks.isEmpty {
                guard type == "IHDR", length == 13 else {
                    throw MetascrubError.malformed(format: format, path: "IHDR", offset: position, reason: "the first chunk is not a 13-byte IHDR")
                }
                let data = try source.read(at: position + 8, count: 13)
                header = Header(width: BigEndian.u32(data, 0), height: BigEndian.u32(data, 4), bitDepth: Int(data[8]),
                                colorType: Int(data[9]), interlaced: data[12] == 1)
            }
            if !crcMatches && !chunk.isAncillary {
                // A damaged critical chunk means damaged image data: cleaning would pass the damage on as verified.
                throw MetascrubError.malformed(format: format, path: "\(type) chunk", offset: position,
                                               reason: "CRC mismatch in a critical chunk (the image data is damaged)")
            }
            chunks.append(chunk)
            position = chunk.end
            if type == "IEND" { break }
        }
        guard let header, header.width > 0, header.height > 0, header.channels != nil else {
            throw MetascrubError.malformed(format: format, path: "IHDR", offset: 8, reason: "zero size or unknown colour type")
        }
        guard chunks.contains(where: { $0.type == "IDAT" }) else {
            throw MetascrubError.malformed(format: format, path: "image", offset: 8, reason: "no IDAT chunk")
        }
        return PNGStructure(chunks: chunks, header: header, iendIndex: chunks.count - 1, fileSize: source.size)
    }

    /// CRC-32 over type and data (the length field is not covered), read in bounded blocks.
    private static func crcMatches(_ source: any ByteSource, typeBytes: [UInt8], dataAt offset: Int64, length: Int64) throws -> Bool {
        var crc = Zlib.crc32(typeBytes)
        var done: Int64 = 0
        while done < length {
            let n = Int(min(length - done, 1 << 20))
            crc = try source.withBytes(at: offset + done, count: n) { Zlib.crc32($0, continuing: crc) }
            done += Int64(n)
        }
        let stored = try source.read(at: offset + length, count: 4)
        return UInt32(BigEndian.u32(stored, 0)) == crc
    }

    /// A complete chunk (length, type, data, CRC) for new or rebuilt content.
    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typeBytes = Array(type.utf8)
        let crc = Zlib.crc32(data, continuing: Zlib.crc32(typeBytes))
        return BigEndian.bytes32(data.count) + typeBytes + data + BigEndian.bytes32(Int(crc))
    }
}
