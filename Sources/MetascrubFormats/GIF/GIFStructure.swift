// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// The block list of a GIF87a/GIF89a file: the logical screen, then extensions and images (each with its
/// data sub-blocks walked, never decoded) up to the trailer byte 0x3B.
struct GIFStructure {
    static let maxBlocks = 1 << 20

    enum Kind: Equatable {
        case image
        case graphicControl
        case plainText
        case comment
        /// Application extension with its 8-byte identifier and 3-byte authentication code ("NETSCAPE2.0").
        case application(String)
        case otherExtension(UInt8)
    }

    struct Block {
        var kind: Kind
        var range: Range<Int64>
        /// Where the data sub-blocks start (after the label and, for applications, the identifier block).
        var dataStart: Int64
    }

    /// Header, logical screen descriptor and global colour table.
    var screen: Range<Int64>
    var blocks: [Block] = []
    /// Offset of the trailer byte 0x3B.
    var trailerByte: Int64
    var fileSize: Int64

    /// Bytes after the trailer byte.
    var trailer: Range<Int64>? { trailerByte + 1 < fileSize ? (trailerByte + 1)..<fileSize : nil }

    static func parse(_ source: any ByteSource) throws -> GIFStructure {
        let format = "GIF"
        let head = try source.read(at: 0, count: 13, format: format, path: "header and logical screen descriptor")
        guard head[0..<3].elementsEqual("GIF".utf8) else {
            throw MetascrubError.malformed(format: format, path: "header", offset: 0, reason: "not a GIF signature")
        }
        var position: Int64 = 13
        if head[10] & 0x80 != 0 { position += 3 << (Int(head[10] & 7) + 1) }
        guard position <= source.size else {
            throw MetascrubError.truncated(format: format, path: "global colour table", offset: 13, needed: position - source.size)
        }
        var s = GIFStructure(screen: 0..<position, trailerByte: 0, fileSize: source.size)
        var reader = BufferedReader(source, at: position, chunk: 1 << 18)

        func byte(_ what: String) throws -> UInt8 {
            guard let b = try reader.next() else {
                throw MetascrubError.truncated(format: format, path: what, offset: reader.position, needed: 1)
            }
            return b
        }
        /// Walks data sub-blocks up to and including the zero-length terminator.
        func skipSubBlocks(_ what: String) throws {
            while true {
                let n = try byte(what)
                if n == 0 { return }
                guard reader.position + Int64(n) <= source.size else {
                    throw MetascrubError.truncated(format: format, path: what, offset: reader.position, needed: reader.position + Int64(n) - source.size)
                }
                reader.seek(reader.position + Int64(n))
            }
        }

        while true {
            guard s.blocks.count < maxBlocks else {
                throw MetascrubError.limitExceeded(format: format, path: "block list", offset: reader.position, limit: "\(maxBlocks) blocks")
            }
            let start = reader.position
            let introducer = try byte("block after block #\(s.blocks.count) (the file ends without the trailer byte 0x3B)")
            switch introducer {
            case 0x3B:
                s.trailerByte = start
                return s
            case 0x2C:
                let descriptor = try source.read(at: start + 1, count: 9, format: format, path: "image descriptor #\(s.blocks.count)")
                var at = start + 10
                if descriptor[8] & 0x80 != 0 { at += 3 << (Int(descriptor[8] & 7) + 1) }
                at += 1  // LZW minimum code size
                guard at <= source.size else {
                    throw MetascrubError.truncated(format: format, path: "image #\(s.blocks.count)", offset: start, needed: at - source.size)
                }
                reader.seek(at)
                try skipSubBlocks("image data at \(start)")
                s.blocks.append(Block(kind: .image, range: start..<reader.position, dataStart: at))
            case 0x21:
                let label = try byte("extension label")
                var kind: Kind
                switch label {
                case 0xF9: kind = .graphicControl
                case 0x01: kind = .plainText
                case 0xFE: kind = .comment
                case 0xFF: kind = .application("")
                default: kind = .otherExtension(label)
                }
                var dataStart = reader.position
                if case .application = kind {
                    let n = try byte("application identifier")
                    let ident = try source.read(at: reader.position, count: Int(n), format: format, path: "application identifier")
                    reader.seek(reader.position + Int64(n))
                    kind = .application(String(decoding: ident.prefix(11).map { $0 >= 0x20 && $0 < 0x7F ? $0 : 0x3F }, as: UTF8.self))
                    dataStart = reader.position
                    if n == 0 {  // an empty identifier block is already the terminator
                        s.blocks.append(Block(kind: kind, range: start..<reader.position, dataStart: dataStart))
                        continue
                    }
                }
                try skipSubBlocks("extension 0x\(String(label, radix: 16)) at \(start)")
                s.blocks.append(Block(kind: kind, range: start..<reader.position, dataStart: dataStart))
            default:
                throw MetascrubError.malformed(format: format, path: "block #\(s.blocks.count)", offset: start,
                                               reason: "unknown block introducer 0x\(String(introducer, radix: 16))")
            }
        }
    }

    /// The concatenated data of a block's sub-blocks (comments, ICC profiles), at most `limit` bytes.
    static func subBlockData(_ source: any ByteSource, _ block: Block, limit: Int) throws -> [UInt8] {
        let bytes = try source.read(at: block.dataStart, count: Int(min(Int64(limit) * 2, block.range.upperBound - block.dataStart)))
        var out: [UInt8] = []
        var at = 0
        while at < bytes.count, bytes[at] != 0, out.count < limit {
            let n = Int(bytes[at])
            out += bytes[min(bytes.count, at + 1)..<min(bytes.count, at + 1 + n)]
            at += 1 + n
        }
        return Array(out.prefix(limit))
    }
}
