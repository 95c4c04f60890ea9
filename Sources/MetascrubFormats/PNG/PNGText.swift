// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubNative

/// A tEXt, zTXt or iTXt chunk split into its fields. Compressed text stays compressed until someone asks.
struct PNGText {
    /// Inflated sizes beyond these are refused: a decompression bomb costs a note, not the machine's memory.
    static let packetLimit = 32 << 20
    static let valueLimit = 4096

    var keyword: String
    /// The text bytes as stored (compressed when `compressed`).
    var stored: [UInt8]
    var compressed: Bool
    /// Latin-1 for tEXt/zTXt, UTF-8 for iTXt.
    var isUTF8: Bool

    /// nil when the chunk does not have the fields its type requires.
    static func parse(type: String, data: [UInt8]) -> PNGText? {
        guard let nul = data.firstIndex(of: 0), (1...79).contains(nul) else { return nil }
        // Keywords are Latin-1 in every text chunk type, also in iTXt.
        let keyword = latin1(data[0..<nul])
        switch type {
        case "tEXt":
            return PNGText(keyword: keyword, stored: Array(data[(nul + 1)...]), compressed: false, isUTF8: false)
        case "zTXt":
            guard nul + 1 < data.count, data[nul + 1] == 0 else { return nil }
            return PNGText(keyword: keyword, stored: Array(data[(nul + 2)...]), compressed: true, isUTF8: false)
        case "iTXt":
            // keyword NUL, compression flag, method, language tag NUL, translated keyword NUL, text
            guard nul + 2 < data.count else { return nil }
            let flag = data[nul + 1]
            guard flag <= 1, data[nul + 2] == 0 else { return nil }
            guard let languageEnd = data[(nul + 3)...].firstIndex(of: 0),
                  let translatedEnd = data[(languageEnd + 1)...].firstIndex(of: 0) else { return nil }
            return PNGText(keyword: keyword, stored: Array(data[(translatedEnd + 1)...]), compressed: flag == 1, isUTF8: true)
        default:
            return nil
        }
    }

    /// The text, inflated with a limit. `prefix` returns at most `limit` bytes instead of failing.
    func text(limit: Int, prefix: Bool = false) throws -> [UInt8] {
        guard compressed else { return prefix ? Array(stored.prefix(limit)) : stored }
        return try Zlib.inflate(stored, limit: limit, prefixOnly: prefix)
    }

    /// A short rendering for `--show-values`; nil when the text cannot be inflated.
    func value() -> String? {
        guard let bytes = try? text(limit: Self.valueLimit, prefix: true) else { return nil }
        let string = isUTF8 ? String(decoding: bytes, as: UTF8.self) : Self.latin1(bytes[...])
        return String(string.prefix(200))
    }

    static func latin1(_ bytes: ArraySlice<UInt8>) -> String {
        String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
    }

    /// An uncompressed iTXt chunk's data (used for a rebuilt XMP packet).
    static func iTXtData(keyword: String, text: [UInt8]) -> [UInt8] {
        Array(keyword.utf8) + [0, 0, 0, 0, 0] + text
    }
}

/// ImageMagick's "Raw profile type NAME" text chunks: a profile written as "\nNAME\n   LENGTH\nHEX…".
enum RawProfile {
    static let keywordPrefix = "Raw profile type "

    /// The profile bytes, or nil when the text is not in ImageMagick's layout.
    static func decode(_ text: [UInt8]) -> [UInt8]? {
        var at = 0
        func skip(_ set: Set<UInt8>) { while at < text.count, set.contains(text[at]) { at += 1 } }
        skip([0x0A, 0x0D, 0x20])
        while at < text.count, text[at] != 0x0A { at += 1 }  // profile name
        skip([0x0A, 0x0D, 0x20, 0x09])
        var length = 0
        var digits = 0
        while at < text.count, (0x30...0x39).contains(text[at]), digits < 10 {
            length = length * 10 + Int(text[at] - 0x30)
            at += 1
            digits += 1
        }
        guard digits > 0, length <= text.count / 2 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(length)
        var high: UInt8?
        while at < text.count, out.count < length {
            let c = text[at]
            at += 1
            let nibble: UInt8
            switch c {
            case 0x30...0x39: nibble = c - 0x30
            case 0x61...0x66: nibble = c - 0x61 + 10
            case 0x41...0x46: nibble = c - 0x41 + 10
            case 0x0A, 0x0D, 0x20, 0x09: continue
            default: return nil
            }
            if let h = high {
                out.append(h << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        return out.count == length ? out : nil
    }

    /// The category of the whole profile chunk, by profile name.
    static func category(_ name: String) -> Category {
        switch name.lowercased() {
        case "exif", "app1": .device
        case "icc", "icm": .rendering
        default: .content
        }
    }
}
