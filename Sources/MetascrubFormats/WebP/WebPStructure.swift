// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// The chunk list of a WebP file (RIFF "WEBP", Google's container specification): each chunk's FourCC,
/// offset and size checked against the RIFF size and the file size; frames inside ANMF listed for verification.
struct WebPStructure {
    static let maxChunks = 1 << 16

    struct Chunk {
        var fourCC: String
        /// Offset of the FourCC.
        var offset: Int64
        /// Size of the payload (without the 8-byte header and the pad byte).
        var size: Int64

        var payloadOffset: Int64 { offset + 8 }
        /// Header, payload and the pad byte of an odd-sized payload.
        var paddedEnd: Int64 { offset + 8 + size + (size & 1) }
        var range: Range<Int64> { offset..<paddedEnd }
        var payload: Range<Int64> { payloadOffset..<payloadOffset + size }
    }

    var chunks: [Chunk] = []
    /// End of the RIFF form as its size field says.
    var riffEnd: Int64
    var fileSize: Int64

    var trailer: Range<Int64>? { riffEnd < fileSize ? riffEnd..<fileSize : nil }

    static func parse(_ source: any ByteSource) throws -> WebPStructure {
        let format = "WebP"
        let head = try source.read(at: 0, count: 12, format: format, path: "RIFF header")
        guard head[0..<4].elementsEqual("RIFF".utf8), head[8..<12].elementsEqual("WEBP".utf8) else {
            throw MetascrubError.malformed(format: format, path: "RIFF header", offset: 0, reason: "not a RIFF WEBP file")
        }
        let riffSize = Int64(ByteOrder.little.u32(head, 4))
        let riffEnd = 8 + riffSize
        guard riffSize >= 4 + 8 else {
            throw MetascrubError.malformed(format: format, path: "RIFF header", offset: 4, reason: "RIFF size \(riffSize) leaves no room for a chunk")
        }
        guard riffEnd <= source.size else {
            throw MetascrubError.truncated(format: format, path: "RIFF form", offset: 4, needed: riffEnd - source.size)
        }
        var s = WebPStructure(riffEnd: riffEnd, fileSize: source.size)
        var position: Int64 = 12
        // A writer may leave the pad byte of the last chunk out of the RIFF size; accept a single byte short.
        while position + 8 <= riffEnd {
            guard s.chunks.count < maxChunks else {
                throw MetascrubError.limitExceeded(format: format, path: "chunk list", offset: position, limit: "\(maxChunks) chunks")
            }
            let header = try source.read(at: position, count: 8, format: format, path: "chunk header #\(s.chunks.count)")
            guard header[0..<4].allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else {
                throw MetascrubError.malformed(format: format, path: "chunk #\(s.chunks.count)", offset: position, reason: "FourCC is not printable ASCII")
            }
            let chunk = Chunk(fourCC: String(decoding: header[0..<4], as: UTF8.self), offset: position, size: Int64(ByteOrder.little.u32(header, 4)))
            guard chunk.payloadOffset + chunk.size <= riffEnd else {
                throw MetascrubError.truncated(format: format, path: "\(chunk.fourCC) chunk", offset: position,
                                               needed: chunk.payloadOffset + chunk.size - riffEnd)
            }
            s.chunks.append(chunk)
            position = min(chunk.paddedEnd, riffEnd)
        }
        guard position == riffEnd else {
            throw MetascrubError.malformed(format: format, path: "RIFF form", offset: position, reason: "\(riffEnd - position) stray bytes at the end of the RIFF form")
        }
        guard s.chunks.contains(where: { ["VP8 ", "VP8L", "ANMF"].contains($0.fourCC) }) else {
            throw MetascrubError.malformed(format: format, path: "RIFF form", offset: 12, reason: "no image chunk (VP8, VP8L or ANMF)")
        }
        return s
    }
}
