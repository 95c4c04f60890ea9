// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import MetascrubNative

/// A stranger's name and position planted into a file, and every place a cleaned output could still carry them:
/// the bytes as they are (ASCII/UTF-8), as UTF-16 in either byte order, inside any zlib stream and inside any
/// Brotli-compressed JPEG XL box.
enum Planted {
    static let name = "C:/Users/Planted/Documents/secret.txt"
    static let position = "48.8584, 2.2945"
    static let dms = "48°51'30.2\"N 2°17'40.2\"E"
    static var text: String { "\(name) \(position) \(dms)" }
    static var bytes: [UInt8] { Array(text.utf8) }
    static var utf16BE: [UInt8] { text.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] } }

    /// Short pieces of the planted text: each alone identifies it, so a partial copy is still found.
    static let needles = ["Planted", "48.8584", "2.2945", "48°51'30"]

    /// Where a needle was found: "ASCII 'Planted' at 120", "zlib@88 '48.8584'", …; empty when the bytes are free.
    static func findings(in bytes: [UInt8]) -> [String] {
        var found = plain(bytes, label: "")
        for (offset, inflated) in zlibStreams(bytes) {
            found += plain(inflated, label: "zlib@\(offset) ")
        }
        for (offset, decoded) in brotliBoxes(bytes) {
            found += plain(decoded, label: "brotli@\(offset) ")
        }
        return found
    }

    static func findings(atPath path: String) -> [String] {
        findings(in: [UInt8](FileManager.default.contents(atPath: path) ?? Data()))
    }

    private static func plain(_ bytes: [UInt8], label: String) -> [String] {
        var found: [String] = []
        for needle in needles {
            let utf16 = Array(needle.utf16)
            let encodings: [(String, [UInt8])] = [
                ("ASCII", Array(needle.utf8)),
                ("UTF-16LE", utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }),
                ("UTF-16BE", utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }),
            ]
            for (encoding, pattern) in encodings {
                if let at = firstIndex(of: pattern, in: bytes) {
                    found.append("\(label)\(encoding) '\(needle)' at \(at)")
                }
            }
        }
        return found
    }

    static func firstIndex(of pattern: [UInt8], in bytes: [UInt8]) -> Int? {
        guard let first = pattern.first, pattern.count <= bytes.count else { return nil }
        var i = 0
        while i <= bytes.count - pattern.count {
            if bytes[i] == first, bytes[i..<(i + pattern.count)].elementsEqual(pattern) { return i }
            i += 1
        }
        return nil
    }

    /// Every zlib stream starting with a header real encoders write (78 01/5E/9C/DA), inflated as far as it goes:
    /// a text chunk's tail after its first MiB counts as much as its head.
    static func zlibStreams(_ bytes: [UInt8]) -> [(Int, [UInt8])] {
        var streams: [(Int, [UInt8])] = []
        guard bytes.count > 2 else { return [] }
        for i in 0..<(bytes.count - 2) where bytes[i] == 0x78 && [0x01, 0x5E, 0x9C, 0xDA].contains(bytes[i + 1]) {
            let window = Array(bytes[i..<min(bytes.count, i + 64 << 20)])
            if let inflated = try? Zlib.inflate(window, limit: 256 << 20, prefixOnly: true), !inflated.isEmpty {
                streams.append((i, inflated))
            } else if let partial = inflatePrefix(window) {
                streams.append((i, partial))
            }
        }
        return streams
    }

    /// A stream cut short still shows what it inflated up to the cut.
    private static func inflatePrefix(_ window: [UInt8]) -> [UInt8]? {
        var size = 1 << 16
        var best: [UInt8]?
        while size < window.count {
            guard let piece = try? Zlib.inflate(Array(window[0..<size]), limit: 256 << 20, prefixOnly: true) else {
                size *= 4
                continue
            }
            best = piece
            size *= 4
        }
        return best
    }

    /// The payload of every `brob` box (JPEG XL's Brotli-compressed metadata), decoded by the `brotli` tool.
    static func brotliBoxes(_ bytes: [UInt8]) -> [(Int, [UInt8])] {
        var decoded: [(Int, [UInt8])] = []
        let tag = Array("brob".utf8)
        var from = 4
        while from + 8 <= bytes.count, let at = firstIndex(of: tag, in: Array(bytes[from...])).map({ $0 + from }) {
            from = at + 4
            let start = at - 4
            let size = bytes[start..<at].reduce(0) { $0 << 8 | Int($1) }
            let end = size == 0 ? bytes.count : start + size
            guard size == 0 || size >= 12, end <= bytes.count, at + 8 <= end else { continue }
            let result = viaFile(Array(bytes[(at + 8)..<end])) { ["brotli", "-d", "-c", $0] }
            if result.status == 0 { decoded.append((start, [UInt8](result.stdout))) }
        }
        return decoded
    }

    /// Brotli-compressed bytes, by the `brotli` tool.
    static func brotli(_ bytes: [UInt8]) -> [UInt8] {
        [UInt8](viaFile(bytes) { ["brotli", "-c", $0] }.stdout)
    }

    /// Runs a tool on bytes written to a file of their own (Tool.run feeds no standard input).
    private static func viaFile(_ bytes: [UInt8], _ argv: (String) -> [String]) -> (status: Int32, stdout: Data) {
        let dir = TempDir(), path = dir.file("stream.bin")
        FileManager.default.createFile(atPath: path, contents: Data(bytes))
        let result = Tool.run(argv(path))
        return (result.status, result.stdout)
    }
}
