// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// A CBOR value (RFC 8949), as much of it as C2PA assertions, claims and COSE signatures use.
///
/// Written here because no maintained CBOR package is on this machine's package mirror; it is a reader only,
/// strict and length-checked: every length is checked against the bytes left before anything is allocated,
/// nesting is bounded, and indefinite lengths, which C2PA's deterministic encoding never uses, are refused.
indirect enum CBOR: Sendable {
    case unsigned(UInt64)
    case negative(UInt64)  // the value is -1 - n
    case bytes([UInt8])
    case text(String)
    case array([CBOR])
    case map([(key: CBOR, value: CBOR)])
    case tagged(UInt64, CBOR)
    case simple(UInt8)
    case float(Double)

    /// The value under a text key of a map.
    subscript(key: String) -> CBOR? {
        guard case .map(let pairs) = self else { return nil }
        return pairs.first { $0.key.text == key }?.value
    }

    var text: String? { if case .text(let t) = self { return t }; return nil }
    var bytes: [UInt8]? { if case .bytes(let b) = self { return b }; return nil }
    var array: [CBOR]? { if case .array(let a) = self { return a }; return nil }
    var integer: Int64? {
        switch self {
        case .unsigned(let n): return n <= UInt64(Int64.max) ? Int64(n) : nil
        case .negative(let n): return n < UInt64(Int64.max) ? -1 - Int64(n) : nil
        default: return nil
        }
    }
    /// CBOR's `false` (simple value 20).
    var isFalse: Bool { if case .simple(20) = self { return true }; return false }
    /// The value inside any tags.
    var untagged: CBOR { if case .tagged(_, let inner) = self { return inner.untagged }; return self }
}

/// Reads one CBOR data item from bytes; errors are `malformed` with the offset in the file.
struct CBORReader {
    static let maxDepth = 32

    private let bytes: [UInt8]
    private var at: Int
    /// File offset of `bytes[0]`, for errors.
    private let origin: Int64
    private let path: String

    /// Decodes the single data item `bytes` holds; bytes after it are an error.
    static func decode(_ bytes: [UInt8], origin: Int64, path: String) throws -> CBOR {
        var reader = CBORReader(bytes: bytes, at: 0, origin: origin, path: path)
        let value = try reader.item(depth: 0)
        guard reader.at == bytes.count else {
            throw reader.malformed("\(bytes.count - reader.at) bytes after the CBOR item")
        }
        return value
    }

    /// Decodes the data item at the start of `bytes` and says how many bytes it took (a COSE payload inside).
    static func decodePrefix(_ bytes: [UInt8], origin: Int64, path: String) throws -> (CBOR, Int) {
        var reader = CBORReader(bytes: bytes, at: 0, origin: origin, path: path)
        return (try reader.item(depth: 0), reader.at)
    }

    private func malformed(_ reason: String) -> MetascrubError {
        .malformed(format: "CBOR", path: path, offset: origin + Int64(at), reason: reason)
    }

    private mutating func take(_ n: Int) throws -> ArraySlice<UInt8> {
        guard n >= 0, n <= bytes.count - at else { throw malformed("\(n) bytes announced, \(bytes.count - at) left") }
        defer { at += n }
        return bytes[at..<at + n]
    }

    private mutating func argument(_ info: UInt8) throws -> UInt64 {
        switch info {
        case 0..<24: return UInt64(info)
        case 24, 25, 26, 27:
            let width = 1 << Int(info - 24)
            return try take(width).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        case 31: throw malformed("indefinite length (not used by C2PA's deterministic CBOR)")
        default: throw malformed("reserved additional information \(info)")
        }
    }

    /// A length that must fit in what is left (each element of an array or map takes at least one byte).
    private mutating func count(_ info: UInt8, perElement: Int) throws -> Int {
        let n = try argument(info)
        guard n <= UInt64(bytes.count - at) / UInt64(perElement) else {
            throw malformed("\(n) elements announced, \(bytes.count - at) bytes left")
        }
        return Int(n)
    }

    private mutating func item(depth: Int) throws -> CBOR {
        guard depth < Self.maxDepth else { throw malformed("nested deeper than \(Self.maxDepth)") }
        let initial = try take(1).first!
        let major = initial >> 5, info = initial & 0x1F
        switch major {
        case 0: return .unsigned(try argument(info))
        case 1: return .negative(try argument(info))
        case 2: return .bytes(Array(try take(count(info, perElement: 1))))
        case 3:
            let raw = try take(count(info, perElement: 1))
            guard let text = String(validating: raw, as: UTF8.self) else { throw malformed("text string is not UTF-8") }
            return .text(text)
        case 4:
            let n = try count(info, perElement: 1)
            var values: [CBOR] = []
            values.reserveCapacity(n)
            for _ in 0..<n { values.append(try item(depth: depth + 1)) }
            return .array(values)
        case 5:
            let n = try count(info, perElement: 2)
            var pairs: [(key: CBOR, value: CBOR)] = []
            pairs.reserveCapacity(n)
            for _ in 0..<n { pairs.append((try item(depth: depth + 1), try item(depth: depth + 1))) }
            return .map(pairs)
        case 6:
            let tag = try argument(info)
            return .tagged(tag, try item(depth: depth + 1))
        default:
            switch info {
            case 0..<24: return .simple(info)
            case 24: return .simple(try take(1).first!)
            case 25: return .float(Self.half(UInt16(try argument(25))))
            case 26: return .float(Double(Float(bitPattern: UInt32(try argument(26)))))
            case 27: return .float(Double(bitPattern: try argument(27)))
            default: throw malformed("reserved simple value \(info)")
            }
        }
    }

    private static func half(_ bits: UInt16) -> Double {
        let exponent = Int(bits >> 10 & 0x1F), mantissa = Double(bits & 0x3FF)
        let sign: Double = bits & 0x8000 != 0 ? -1 : 1
        switch exponent {
        case 0: return sign * mantissa * 0x1p-24
        case 31: return mantissa == 0 ? sign * .infinity : .nan
        default: return sign * (1 + mantissa / 1024) * Double(sign: .plus, exponent: exponent - 15, significand: 1)
        }
    }
}
