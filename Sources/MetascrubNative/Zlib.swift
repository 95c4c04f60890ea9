import CDeflate
import CZlib

/// Why zlib data could not be inflated.
public enum ZlibError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The data inflates to more than the caller allowed (a decompression bomb, or simply too large).
    case outputLimit(Int)
    /// zlib rejected the data (bad header, bad checksum, invalid codes).
    case corrupt(String)
    /// The stream ends before zlib's end-of-stream marker.
    case incomplete

    public var description: String {
        switch self {
        case .outputLimit(let limit): "inflates to more than \(limit) bytes"
        case .corrupt(let message): "corrupt zlib data (\(message))"
        case .incomplete: "zlib data ends before its end-of-stream marker"
        }
    }
}

/// zlib (RFC 1950) streams as PNG uses them: inflate with an output limit, deflate, CRC-32.
/// Each call has its own `z_stream`, so calls are safe from any thread.
public enum Zlib {
    /// Inflates a complete zlib stream, refusing to produce more than `limit` bytes: memory stays bounded
    /// whatever the input claims. Bytes after the end-of-stream marker are ignored, as PNG decoders do.
    /// With `prefixOnly`, the first `limit` bytes are returned instead of an error (for showing a value).
    public static func inflate(_ input: [UInt8], limit: Int, prefixOnly: Bool = false) throws -> [UInt8] {
        var stream = z_stream()
        guard czlib_inflate_init(&stream) == Z_OK else { throw ZlibError.corrupt("inflateInit failed") }
        defer { inflateEnd(&stream) }
        var output: [UInt8] = []
        let step = 64 * 1024
        var window = [UInt8](repeating: 0, count: step)
        return try input.withUnsafeBufferPointer { inBuffer -> [UInt8] in
            stream.next_in = UnsafeMutablePointer(mutating: inBuffer.baseAddress)
            stream.avail_in = uInt(inBuffer.count)
            while true {
                let (status, produced) = window.withUnsafeMutableBufferPointer { out -> (Int32, Int) in
                    stream.next_out = out.baseAddress
                    stream.avail_out = uInt(out.count)
                    let status = CZlib.inflate(&stream, Z_NO_FLUSH)
                    return (status, out.count - Int(stream.avail_out))
                }
                if produced > 0 {
                    if output.count + produced > limit {
                        guard prefixOnly else { throw ZlibError.outputLimit(limit) }
                        output.append(contentsOf: window[0..<(limit - output.count)])
                        return output
                    }
                    output.append(contentsOf: window[0..<produced])
                }
                switch status {
                case Z_STREAM_END:
                    return output
                case Z_OK:
                    continue
                case Z_BUF_ERROR:
                    // No progress possible: the input ran out before the end of the stream.
                    if stream.avail_in == 0 { throw ZlibError.incomplete }
                    continue
                default:
                    throw ZlibError.corrupt(stream.msg.map { String(cString: $0) } ?? "error \(status)")
                }
            }
        }
    }

    /// Where one zlib stream split into pieces (PNG's IDAT chunks) ends: the number of input bytes up to and
    /// including its checksum, nil when it does not end within them. Each piece is asked for as needed; what is
    /// inflated is thrown away, so memory stays a window whatever the image.
    public static func streamLength(_ nextPiece: () throws -> [UInt8]?) throws -> Int? {
        var stream = z_stream()
        guard czlib_inflate_init(&stream) == Z_OK else { throw ZlibError.corrupt("inflateInit failed") }
        defer { inflateEnd(&stream) }
        var window = [UInt8](repeating: 0, count: 64 * 1024)
        var fed = 0
        while let piece = try nextPiece() {
            fed += piece.count
            let end = try piece.withUnsafeBufferPointer { inBuffer -> Int? in
                stream.next_in = UnsafeMutablePointer(mutating: inBuffer.baseAddress)
                stream.avail_in = uInt(inBuffer.count)
                while true {
                    let status = window.withUnsafeMutableBufferPointer { out -> Int32 in
                        stream.next_out = out.baseAddress
                        stream.avail_out = uInt(out.count)
                        return CZlib.inflate(&stream, Z_NO_FLUSH)
                    }
                    switch status {
                    case Z_STREAM_END: return fed - Int(stream.avail_in)
                    case Z_OK: if stream.avail_in == 0 && stream.avail_out > 0 { return nil }
                    case Z_BUF_ERROR: if stream.avail_in == 0 { return nil }
                    default: throw ZlibError.corrupt(stream.msg.map { String(cString: $0) } ?? "error \(status)")
                    }
                }
            }
            if let end { return end }
        }
        return nil
    }

    /// A zlib stream of `input` at `level` (0–9). Deterministic for the same zlib version and level.
    public static func deflate(_ input: [UInt8], level: Int32 = 9) throws -> [UInt8] {
        var stream = z_stream()
        guard czlib_deflate_init(&stream, level) == Z_OK else { throw ZlibError.corrupt("deflateInit failed") }
        defer { deflateEnd(&stream) }
        let bound = Int(deflateBound(&stream, uLong(input.count)))
        var output = [UInt8](repeating: 0, count: bound)
        let written = try input.withUnsafeBufferPointer { inBuffer -> Int in
            try output.withUnsafeMutableBufferPointer { out -> Int in
                stream.next_in = UnsafeMutablePointer(mutating: inBuffer.baseAddress)
                stream.avail_in = uInt(inBuffer.count)
                stream.next_out = out.baseAddress
                stream.avail_out = uInt(out.count)
                let status = CZlib.deflate(&stream, Z_FINISH)
                guard status == Z_STREAM_END else { throw ZlibError.corrupt("deflate returned \(status)") }
                return out.count - Int(stream.avail_out)
            }
        }
        output.removeSubrange(written...)
        return output
    }

    /// CRC-32 (ISO 3309, as PNG chunks use it), continuing from `crc` (0 to start).
    public static func crc32(_ bytes: [UInt8], continuing crc: UInt32 = 0) -> UInt32 {
        bytes.withUnsafeBytes { crc32($0, continuing: crc) }
    }

    /// CRC-32 over bytes lent without a copy (a chunk of a file held in memory).
    public static func crc32(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        guard let base = bytes.baseAddress else { return crc }
        return libdeflate_crc32(crc, base, bytes.count)
    }
}
