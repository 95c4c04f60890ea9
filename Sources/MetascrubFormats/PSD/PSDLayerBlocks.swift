// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// The embedded data in a PSD's layer-and-mask section (Adobe Photoshop File Formats Specification, "Layer and
/// Mask Information Section" and "Additional Layer Information"): smart objects' linked and embedded files
/// (`lnk2`, `lnkD`, `lnk3` — complete files with their own EXIF and GPS) and per-layer metadata (`shmd`).
/// Everything else in the section is the document (layer records, masks, names, pixel data).
enum PSDLayerBlocks {
    struct Found: Sendable {
        /// `lnk2`, `lnkD`, `lnk3` or `shmd`.
        var key: String
        /// "layer N" (1-based, in file order) for a layer's block; "document" for a global one.
        var owner: String
        /// The block's data, in file offsets.
        var data: Range<Int64>
        /// For a linked-file block: its files.
        var files: [LinkedFile] = []
    }

    struct LinkedFile: Sendable {
        /// `liFD` (embedded), `liFE` (external), `liFA` (alias).
        var kind: String
        /// The declared file type ("JPEG", "png ", ...), printable characters only.
        var type: String
        /// The whole entry.
        var range: Range<Int64>
        /// An embedded JPEG's own bytes, where they could be found.
        var jpeg: Range<Int64>?
        /// An embedded file's bytes (any format), where they could be found: the JPEG's, or the data right after
        /// the length and a clear open-descriptor flag.
        var data: Range<Int64>?
    }

    static let keys: Set<String> = ["lnk2", "lnkD", "lnk3", "shmd"]
    /// Keys whose length field is 8 bytes in a PSB.
    static let longKeysInPSB: Set<String> = ["LMsk", "Lr16", "Lr32", "Layr", "Mt16", "Mt32", "Mtrn", "Alph", "FMsk", "lnk2", "FEid", "FXid", "PxSD"]
    /// Larger sections are not read into memory for this walk.
    static let readLimit: Int64 = 256 << 20

    /// Walks the layer-and-mask section of `structure`. Throws `malformed` where a length runs past its parent.
    static func find(_ source: any ByteSource, _ structure: PSDStructure) throws -> [Found] {
        let format = structure.format, large = structure.isLarge
        let start = structure.layersAndImage.lowerBound
        let unit = large ? 8 : 4
        let sectionLength = try Reader(source: source, format: format, end: structure.layersAndImage.upperBound)
            .length(at: start, size: unit, path: "layer and mask information")
        let end = start + Int64(unit) + sectionLength
        guard sectionLength > 0 else { return [] }
        guard sectionLength <= readLimit else {
            throw MetascrubError.limitExceeded(format: format, path: "layer and mask information", offset: start, limit: "256 MiB walked for smart objects")
        }
        var reader = Reader(source: source, format: format, end: end)
        var found: [Found] = []
        // Layer info: its length, the layer count, the records (channel data follows and is not read).
        var at = start + Int64(unit)
        let infoLength = try reader.length(at: at, size: unit, path: "layer info")
        let infoEnd = at + Int64(unit) + infoLength
        guard infoEnd <= end else { throw reader.fail(at, "layer info", "runs past the section") }
        if infoLength > 0 {
            var record = at + Int64(unit) + 2
            let count = abs(Int(Int16(bitPattern: UInt16(try reader.uint(at: at + Int64(unit), size: 2, path: "layer count")))))
            for layer in 0..<count {
                let path = "layer \(layer + 1)"
                let channels = try reader.uint(at: record + 16, size: 2, path: path)
                let extraAt = record + 18 + Int64(channels) * Int64(large ? 10 : 6) + 12
                let extraLength = try reader.length(at: extraAt, size: 4, path: path)
                let extraEnd = extraAt + 4 + extraLength
                guard extraEnd <= infoEnd else { throw reader.fail(extraAt, path, "extra data runs past the layer info") }
                var inner = Reader(source: source, format: format, end: extraEnd)
                var p = extraAt + 4
                p += 4 + (try inner.length(at: p, size: 4, path: "\(path) mask data"))
                p += 4 + (try inner.length(at: p, size: 4, path: "\(path) blending ranges"))
                let nameLength = Int64(try inner.uint(at: p, size: 1, path: "\(path) name"))
                p += (1 + nameLength + 3) / 4 * 4
                found += try blocks(&inner, from: p, to: extraEnd, owner: path, large: large)
                record = extraEnd
            }
        }
        at = infoEnd
        // Global layer mask info, then the document's own additional layer information.
        at += 4 + (try reader.length(at: at, size: 4, path: "global layer mask info"))
        guard at <= end else { throw reader.fail(at, "global layer mask info", "runs past the section") }
        found += try blocks(&reader, from: at, to: end, owner: "document", large: large)
        return found
    }

    /// The additional-layer-information blocks from `from` to `to`: signature, key, length, data.
    static func blocks(_ reader: inout Reader, from: Int64, to end: Int64, owner: String, large: Bool) throws -> [Found] {
        var found: [Found] = []
        var at = from
        while at + 12 <= end {
            let head = try reader.bytes(at: at, count: 8, path: "\(owner) additional layer information")
            // Writers pad the end of the section with zeros.
            if head.allSatisfy({ $0 == 0 }) { break }
            guard head.starts(with: Array("8BIM".utf8)) || head.starts(with: Array("8B64".utf8)) else {
                throw reader.fail(at, "\(owner) additional layer information", "block without the 8BIM signature")
            }
            let key = String(decoding: head[4..<8], as: UTF8.self)
            let size = large && longKeysInPSB.contains(key) ? 8 : 4
            let length = try reader.length(at: at + 8, size: size, path: "\(owner)/\(key)")
            let data = at + 8 + Int64(size)..<at + 8 + Int64(size) + length
            guard data.upperBound <= end else { throw reader.fail(at, "\(owner)/\(key)", "block runs past its parent") }
            if keys.contains(key) {
                var block = Found(key: key, owner: owner, data: data)
                if key != "shmd" { block.files = try linkedFiles(&reader, data, path: "\(owner)/\(key)") }
                found.append(block)
            }
            at = data.upperBound + length % 2
        }
        return found
    }

    /// The linked files of a `lnk2`/`lnkD`/`lnk3` block: an 8-byte length, then the kind and version, the unique
    /// ID, the original name and the file type; entries are padded to 4 bytes.
    static func linkedFiles(_ reader: inout Reader, _ data: Range<Int64>, path: String) throws -> [LinkedFile] {
        var files: [LinkedFile] = []
        var at = data.lowerBound
        while at + 8 <= data.upperBound {
            let length = try reader.length(at: at, size: 8, path: path)
            if length == 0 { break }
            let entry = at + 8..<at + 8 + length
            guard entry.upperBound <= data.upperBound, length >= 9 else { throw reader.fail(at, path, "linked file runs past its block") }
            let kind = String(decoding: try reader.bytes(at: entry.lowerBound, count: 4, path: path), as: UTF8.self)
            var type = "?"
            var jpeg: Range<Int64>?
            var data: Range<Int64>?
            // The file type follows the unique ID (Pascal string) and the original name (4-byte count of UTF-16 units).
            let idLength = Int64(try reader.uint(at: entry.lowerBound + 8, size: 1, path: path))
            let nameAt = entry.lowerBound + 9 + idLength
            if nameAt + 4 <= entry.upperBound {
                let units = Int64(try reader.uint(at: nameAt, size: 4, path: path))
                let typeAt = nameAt + 4 + units * 2
                if typeAt + 4 <= entry.upperBound {
                    let code = try reader.bytes(at: typeAt, count: 4, path: path)
                    type = String(decoding: code.filter { (0x21...0x7E).contains($0) }, as: UTF8.self)
                    if kind == "liFD", typeAt + 17 <= entry.upperBound {
                        jpeg = try embeddedJPEG(reader, after: typeAt + 8, in: entry, path: path)
                        let length = Int64(clamping: try reader.uint(at: typeAt + 8, size: 8, path: path))
                        let flag = try reader.uint(at: typeAt + 16, size: 1, path: path)
                        if flag == 0, length > 0, length <= entry.upperBound - (typeAt + 17) { data = typeAt + 17..<typeAt + 17 + length }
                        data = jpeg ?? data
                    }
                }
            }
            files.append(LinkedFile(kind: kind, type: type, range: entry, jpeg: jpeg, data: data))
            at = entry.upperBound + (4 - length % 4) % 4
        }
        return files
    }

    /// An embedded file's data: its 8-byte length at `at`, then a flag for an open descriptor (which may
    /// follow), then the data. The data is taken as a JPEG only where it starts with a JPEG's SOI: right after
    /// the flag, or (with a descriptor, whose length is not stated) the first SOI that leaves room for it.
    static func embeddedJPEG(_ reader: Reader, after at: Int64, in entry: Range<Int64>, path: String) throws -> Range<Int64>? {
        let length = Int64(clamping: try reader.uint(at: at, size: 8, path: path))
        let first = at + 9
        guard length >= 4, length <= entry.upperBound - first else { return nil }
        let window = try reader.bytes(at: first, count: Int(entry.upperBound - first), path: path)
        let last = window.count - Int(length)
        for i in 0...last where window[i] == 0xFF && window[i + 1] == 0xD8 && window[i + 2] == 0xFF {
            return first + Int64(i)..<first + Int64(i) + length
        }
        return nil
    }

    /// Bounded big-endian reads inside one parent range.
    struct Reader {
        let source: any ByteSource
        let format: String
        let end: Int64

        func fail(_ offset: Int64, _ path: String, _ reason: String) -> MetascrubError {
            .malformed(format: format, path: path, offset: offset, reason: reason)
        }

        func bytes(at offset: Int64, count: Int, path: String) throws -> [UInt8] {
            guard offset >= 0, offset + Int64(count) <= end else { throw fail(offset, path, "runs past its parent") }
            return try source.read(at: offset, count: count, format: format, path: path)
        }

        func uint(at offset: Int64, size: Int, path: String) throws -> UInt64 {
            try bytes(at: offset, count: size, path: path).reduce(0) { $0 << 8 | UInt64($1) }
        }

        /// A length field, checked to fit in the parent from where its data starts.
        func length(at offset: Int64, size: Int, path: String) throws -> Int64 {
            let value = try uint(at: offset, size: size, path: path)
            guard value <= UInt64(max(0, end - offset - Int64(size))) else { throw fail(offset, path, "length \(value) runs past its parent") }
            return Int64(value)
        }
    }
}
