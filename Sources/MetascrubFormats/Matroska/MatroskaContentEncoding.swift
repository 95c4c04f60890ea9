// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubNative

/// A track's ContentEncodings (RFC 9559 §5.1.4.1.31): muxers compress text tracks (`mkvmerge --compression
/// 0:zlib`, drone SRT telemetry among them) or strip a header every frame shares. The scanner undoes them before
/// it reads a block's text; what it cannot undo (encryption, bzlib, LZO) makes the track's frames unreadable.
enum MatroskaContentEncoding: Equatable {
    case zlib
    case strippedHeader([UInt8])
    case unreadable(String)

    enum ID {
        static let encodings: UInt32 = 0x6D80, encoding: UInt32 = 0x6240, scope: UInt32 = 0x5032, type: UInt32 = 0x5033
        static let compression: UInt32 = 0x5034, algorithm: UInt32 = 0x4254, settings: UInt32 = 0x4255
    }

    /// The encodings of a TrackEntry's ContentEncodings element that apply to its frames, in the order a reader
    /// undoes them (the highest ContentEncodingOrder first).
    static func read(_ input: any ByteSource, _ encodings: EBMLElement) throws -> [MatroskaContentEncoding] {
        var found: [(order: UInt64, encoding: MatroskaContentEncoding)] = []
        for e in try EBML.children(input, of: encodings, path: "ContentEncodings") where e.id == ID.encoding {
            var order: UInt64 = 0, scope: UInt64 = 1, type: UInt64 = 0, algorithm: UInt64 = 0, settings: [UInt8] = []
            for c in try EBML.children(input, of: e, path: "ContentEncoding") {
                switch c.id {
                case 0x5031: order = try EBML.uint(input, c)
                case ID.scope: scope = try EBML.uint(input, c)
                case ID.type: type = try EBML.uint(input, c)
                case ID.compression:
                    for s in try EBML.children(input, of: c, path: "ContentCompression") {
                        if s.id == ID.algorithm { algorithm = try EBML.uint(input, s) }
                        if s.id == ID.settings { settings = try EBML.bytes(input, s) }
                    }
                default: break
                }
            }
            guard scope & 1 != 0 else { continue }
            let encoding: MatroskaContentEncoding = switch (type, algorithm) {
            case (0, 0): .zlib
            case (0, 3): .strippedHeader(settings)
            case (0, _): .unreadable("compression algorithm \(algorithm)")
            default: .unreadable("encryption")
            }
            found.append((order, encoding))
        }
        return found.sorted { $0.order > $1.order }.map(\.encoding)
    }

    /// A frame as its codec wrote it, or nil when an encoding cannot be undone.
    static func decode(_ frame: [UInt8], _ encodings: [MatroskaContentEncoding], limit: Int) -> [UInt8]? {
        var data = frame
        for encoding in encodings {
            switch encoding {
            case .zlib:
                guard let inflated = try? Zlib.inflate(data, limit: limit, prefixOnly: true) else { return nil }
                data = inflated
            case .strippedHeader(let header): data = header + data
            case .unreadable: return nil
            }
        }
        return data
    }
}
