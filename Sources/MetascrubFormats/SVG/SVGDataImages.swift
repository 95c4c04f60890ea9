// SPDX-License-Identifier: GPL-3.0-or-later

/// Images in base64 `data:` URIs inside CSS: a `style` attribute or a `<style>` element
/// (`background: url(data:image/jpeg;base64,…)`). Each is an embedded file like an `<image>`'s; the text around
/// them is kept as it is and only their base64 bodies are replaced.
enum SVGDataImages {
    struct Found {
        /// `data:image/png;base64,`
        var header: String
        /// The base64 body (whitespace included) in the text's UTF-8 bytes.
        var body: Range<Int>
        var bytes: [UInt8]
    }

    static let marker = Array("data:image/".utf8)

    static func find(_ text: [UInt8]) -> [Found] {
        var found: [Found] = []
        var at = 0
        while at + marker.count <= text.count {
            guard text[at..<(at + marker.count)].elementsEqual(marker) else { at += 1; continue }
            guard let comma = text[at...].prefix(256).firstIndex(of: 0x2C) else { at += marker.count; continue }
            let header = Array(text[at...comma])
            var end = comma + 1
            while end < text.count, isBase64(text[end]) || isSpace(text[end]) { end += 1 }
            if header.dropLast().suffix(7).elementsEqual(Array(";base64".utf8)),
               let bytes = Base64.decode(text[(comma + 1)..<end].filter { !isSpace($0) }[...]), !bytes.isEmpty {
                found.append(Found(header: String(decoding: header, as: UTF8.self), body: (comma + 1)..<end,
                    bytes: bytes))
            }
            at = max(end, comma + 1)
        }
        return found
    }

    /// The text with each listed image's body replaced (index in `find` order → new bytes, base64-encoded here).
    static func replacing(_ text: [UInt8], _ replacements: [Int: [UInt8]]) -> [UInt8] {
        var out = text
        for (index, image) in find(text).enumerated().reversed() {
            guard let bytes = replacements[index] else { continue }
            out.replaceSubrange(image.body, with: Base64.encode(bytes))
        }
        return out
    }

    /// The text without the bodies: what the rendering projection compares (the bodies are proven as files).
    static func stripped(_ text: String) -> String {
        let bytes = Array(text.utf8)
        guard bytes.count >= marker.count, text.contains("data:image/") else { return text }
        var out = bytes
        for image in find(bytes).reversed() { out.removeSubrange(image.body) }
        return String(decoding: out, as: UTF8.self)
    }

    static func isBase64(_ c: UInt8) -> Bool {
        (0x41...0x5A).contains(c) || (0x61...0x7A).contains(c) || (0x30...0x39).contains(c)
            || c == 0x2B || c == 0x2F || c == 0x3D
    }

    static func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 }
}
