// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// What each ID3v2 frame means for privacy, and how to render a text frame's value for `--show-values`.
/// Keys use the v2.3/v2.4 frame IDs (`id3:TPE1`), also for v2.2 tags, so one policy rule covers every version.
enum ID3Frames {
    /// v2.2 three-character IDs → their v2.3 equivalents.
    static let v22: [String: String] = [
        "TT1": "TIT1", "TT2": "TIT2", "TT3": "TIT3", "TP1": "TPE1", "TP2": "TPE2", "TP3": "TPE3", "TP4": "TPE4",
        "TCM": "TCOM", "TXT": "TEXT", "TLA": "TLAN", "TCO": "TCON", "TAL": "TALB", "TPA": "TPOS", "TRK": "TRCK",
        "TRC": "TSRC", "TYE": "TYER", "TDA": "TDAT", "TIM": "TIME", "TRD": "TRDA", "TMT": "TMED", "TFT": "TFLT",
        "TBP": "TBPM", "TCR": "TCOP", "TPB": "TPUB", "TEN": "TENC", "TSS": "TSSE", "TOF": "TOFN", "TLE": "TLEN",
        "TSI": "TSIZ", "TDY": "TDLY", "TKE": "TKEY", "TOT": "TOAL", "TOA": "TOPE", "TOL": "TOLY", "TOR": "TORY",
        "TXX": "TXXX", "WAF": "WOAF", "WAR": "WOAR", "WAS": "WOAS", "WCM": "WCOM", "WCP": "WCOP", "WPB": "WPUB",
        "WXX": "WXXX", "IPL": "IPLS", "MCI": "MCDI", "ETC": "ETCO", "MLL": "MLLT", "STC": "SYTC", "ULT": "USLT",
        "SLT": "SYLT", "COM": "COMM", "RVA": "RVAD", "EQU": "EQUA", "REV": "RVRB", "PIC": "APIC", "GEO": "GEOB",
        "CNT": "PCNT", "POP": "POPM", "BUF": "RBUF", "CRM": "ENCR", "CRA": "AENC", "LNK": "LINK", "UFI": "UFID",
    ]

    static let identity: Set<String> = [
        "TPE1", "TPE2", "TPE3", "TPE4", "TCOM", "TEXT", "TOLY", "TOPE", "TOWN", "TCOP", "TPUB", "TRSN", "TRSO", "TENC",
        "TMCL", "TIPL", "IPLS", "POPM", "UFID", "WCOM", "WCOP", "WOAF", "WOAR", "WOAS", "WORS", "WPAY", "WPUB",
        "TSOP", "TSO2", "TSOC", "TPRO", "OWNE", "USER", "TOFN",
    ]
    static let time: Set<String> = ["TDRC", "TDRL", "TDEN", "TDOR", "TDTG", "TYER", "TDAT", "TIME", "TORY", "TRDA"]
    static let software: Set<String> = ["TSSE"]
    /// Binary blobs: pictures, encapsulated objects, private frames, CD TOCs, signatures.
    static let embedded: Set<String> = ["APIC", "GEOB", "PRIV", "MCDI", "COMR", "ENCR", "AENC", "SIGN", "GRID"]
    /// IDs defined by ID3v2.3/2.4 that are not in the sets above (all text or tables): content.
    static let known: Set<String> = [
        "TIT1", "TIT2", "TIT3", "TALB", "TCON", "TRCK", "TPOS", "TSST", "TKEY", "TBPM", "TLAN", "TMOO", "TSRC", "TSOA",
        "TSOT", "TCMP", "TDLY", "TLEN", "TMED", "TOAL", "TFLT", "TSIZ", "TXXX", "WXXX", "COMM", "USLT", "SYLT", "ETCO",
        "MLLT", "SYTC", "RVA2", "RVAD", "EQU2", "EQUA", "RVRB", "PCNT", "RBUF", "LINK", "POSS", "SEEK", "ASPI",
        "GRP1", "MVNM", "MVIN", "PCST", "TCAT", "TDES", "TGID", "TKWD", "WFED", "XRVA", "XDOR", "XSOP", "XSOA", "XSOT",
    ]

    /// The v2.3-style ID of a frame ID as found in a tag of `major` version.
    static func canonical(_ id: String, major: UInt8) -> String {
        major == 2 ? (v22[id] ?? id) : id
    }

    static func category(_ id: String) -> Category {
        if identity.contains(id) { return .identity }
        if time.contains(id) { return .time }
        if software.contains(id) { return .software }
        if embedded.contains(id) { return .embedded }
        return .content
    }

    static func isKnown(_ id: String) -> Bool {
        identity.contains(id) || time.contains(id) || software.contains(id) || embedded.contains(id) || known.contains(id)
    }

    /// A short value for text, URL and comment frames (only computed for `--show-values`).
    static func value(id: String, data: [UInt8]) -> String? {
        guard let first = id.first else { return nil }
        if first == "W" && id != "WXXX" { return latin1(data[...]) }
        guard !data.isEmpty else { return nil }
        let encoding = data[0]
        switch id {
        case "COMM", "USLT":
            guard data.count >= 4 else { return nil }
            let parts = split(data[4...], encoding: encoding)
            return parts.map { decode($0, encoding) }.filter { !$0.isEmpty }.joined(separator: ": ")
        case "TXXX", "WXXX":
            let parts = split(data[1...], encoding: encoding)
            return parts.map { decode($0, encoding) }.joined(separator: ": ")
        default:
            guard first == "T" else { return nil }
            return decode(data[1...], encoding).replacingNulls
        }
    }

    /// Splits at the first terminator of the encoding (one NUL, or two aligned NULs for UTF-16).
    static func split(_ bytes: ArraySlice<UInt8>, encoding: UInt8) -> [ArraySlice<UInt8>] {
        let wide = encoding == 1 || encoding == 2
        var i = bytes.startIndex
        while i < bytes.endIndex {
            if wide {
                if i + 1 < bytes.endIndex, bytes[i] == 0, bytes[i + 1] == 0 { return [bytes[bytes.startIndex..<i], bytes[(i + 2)...]] }
                i += 2
            } else {
                if bytes[i] == 0 { return [bytes[bytes.startIndex..<i], bytes[(i + 1)...]] }
                i += 1
            }
        }
        return [bytes]
    }

    static func decode(_ bytes: ArraySlice<UInt8>, _ encoding: UInt8) -> String {
        switch encoding {
        case 1, 2:
            var b = Array(bytes)
            var bigEndian = encoding == 2
            if b.count >= 2, b[0] == 0xFF, b[1] == 0xFE { bigEndian = false; b.removeFirst(2) }
            else if b.count >= 2, b[0] == 0xFE, b[1] == 0xFF { bigEndian = true; b.removeFirst(2) }
            var units: [UInt16] = []
            var i = 0
            while i + 1 < b.count {
                units.append(bigEndian ? UInt16(b[i]) << 8 | UInt16(b[i + 1]) : UInt16(b[i + 1]) << 8 | UInt16(b[i]))
                i += 2
            }
            return String(decoding: units, as: UTF16.self)
        case 3: return String(decoding: bytes, as: UTF8.self)
        default: return latin1(bytes)
        }
    }

    static func latin1(_ bytes: ArraySlice<UInt8>) -> String {
        String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
    }
}

extension String {
    /// NUL-separated multi-value text frames rendered with "; ", trailing NULs dropped.
    var replacingNulls: String {
        split(separator: "\0", omittingEmptySubsequences: true).joined(separator: "; ")
    }
}
