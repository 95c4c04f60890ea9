// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// The chunk list of an EA-IFF-85 style file: RIFF/RF64 (little-endian, WAV) or FORM (big-endian, AIFF/AIFC).
/// Sizes are checked against the form size and the real file size; RF64's 64-bit sizes come from its ds64
/// chunk (EBU Tech 3306). The one chunk walker for WAV/RF64, AIFF and WebP (AVI's nested lists and AVIX
/// forms have their own).
struct IFFForm {
    static let maxChunks = 1 << 16

    enum Kind { case riff, rf64, form }

    struct Chunk {
        var id: String
        /// Offset of the 8-byte chunk header.
        var offset: Int64
        /// Payload size (from ds64 when the header says 0xFFFFFFFF in RF64).
        var size: Int64
        var payloadOffset: Int64 { offset + 8 }
        var payload: Range<Int64> { payloadOffset..<payloadOffset + size }
        var paddedEnd: Int64 { offset + 8 + size + (cut ? 0 : size & 1) }
        /// Cut by the end of a damaged file: `size` is what is there, and no pad byte follows.
        var cut = false
        /// Header, payload and the pad byte of an odd-sized payload.
        var range: Range<Int64> { offset..<paddedEnd }
    }

    var kind: Kind
    var formType: String
    var chunks: [Chunk] = []
    var formEnd: Int64
    var fileSize: Int64
    /// Why the file was taken as cut inside its sample data, when it was.
    var damage: MetascrubError?

    var order: ByteOrder { kind == .form ? .big : .little }
    var trailer: Range<Int64>? { formEnd < fileSize ? formEnd..<fileSize : nil }

    static func u64le(_ b: [UInt8], _ o: Int) -> Int64 {
        var v: UInt64 = 0
        for i in (o..<o + 8).reversed() { v = v << 8 | UInt64(b[i]) }
        return v > UInt64(Int64.max) ? Int64.max : Int64(v)
    }

    /// `cutChunks`: chunks (the sample data) that may be cut by the end of a damaged file; what is there of
    /// them is kept and `damage` says what happened. A file cut anywhere else is refused. `garbageAfter`: once
    /// one of these chunks (the image) has been read, bytes that are no chunk (no printable ID) end the form
    /// there: they become trailing data, an item the policy decides on, and `damage` says so. A chunk that
    /// is cut is still refused: it may be metadata that can no longer be read whole.
    static func parse(_ source: any ByteSource, format: String, forms: Set<String>, kinds: Set<Kind> = [.riff, .rf64, .form],
                      cutChunks: Set<String> = [], garbageAfter: Set<String> = []) throws -> IFFForm {
        let head = try source.read(at: 0, count: 12, format: format, path: "form header")
        let magic = String(decoding: head[0..<4], as: UTF8.self)
        let kind: Kind
        switch magic {
        case "RIFF": kind = .riff
        case "RF64", "BW64": kind = .rf64
        case "FORM": kind = .form
        default: throw MetascrubError.malformed(format: format, path: "form header", offset: 0, reason: "not a RIFF/RF64/FORM file")
        }
        guard kinds.contains(kind) else {
            throw MetascrubError.malformed(format: format, path: "form header", offset: 0, reason: "not a \(format) file (\(magic) form)")
        }
        let formType = String(decoding: head[8..<12], as: UTF8.self)
        guard forms.contains(formType) else {
            throw MetascrubError.malformed(format: format, path: "form header", offset: 8, reason: "unexpected form type")
        }
        let order: ByteOrder = kind == .form ? .big : .little
        var formSize = Int64(order.u32(head, 4))
        var ds64: [UInt8] = []
        if kind == .rf64 {
            // ds64 must come first: RIFF size, data size, sample count, then a table of other large chunks.
            let header = try source.read(at: 12, count: 8, format: format, path: "ds64 chunk")
            let size = Int(ByteOrder.little.u32(header, 4))
            guard header[0..<4].elementsEqual("ds64".utf8), size >= 24, size <= 1 << 20 else {
                throw MetascrubError.malformed(format: format, path: "ds64 chunk", offset: 12, reason: "RF64 file without a valid ds64 chunk first")
            }
            ds64 = try source.read(at: 20, count: size, format: format, path: "ds64 chunk")
            formSize = u64le(ds64, 0)
        }
        guard formSize >= 4 else {
            throw MetascrubError.malformed(format: format, path: "form header", offset: 4, reason: "form size \(formSize) is too small")
        }
        // Compared before adding: an RF64 ds64 size can be near 2^63, and 8 + it would trap.
        var damage: MetascrubError?
        if formSize > source.size - 8 {
            let error = MetascrubError.truncated(format: format, path: "\(magic) form", offset: 4, needed: formSize - (source.size - 8))
            guard !cutChunks.isEmpty else { throw error }
            damage = error
            formSize = source.size - 8
        }
        let formEnd = 8 + formSize
        var form = IFFForm(kind: kind, formType: formType, formEnd: formEnd, fileSize: source.size, damage: damage)
        var position: Int64 = 12
        // A writer may leave the pad byte of the last chunk out of the form size: accept one byte short.
        while position + 8 <= formEnd {
            guard form.chunks.count < maxChunks else {
                throw MetascrubError.limitExceeded(format: format, path: "chunk list", offset: position, limit: "\(maxChunks) chunks")
            }
            let header = try source.read(at: position, count: 8, format: format, path: "chunk header #\(form.chunks.count)")
            let afterImage = form.chunks.contains { garbageAfter.contains($0.id) }
            guard header[0..<4].allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else {
                let error = MetascrubError.malformed(format: format, path: "chunk #\(form.chunks.count)", offset: position, reason: "chunk ID is not printable ASCII")
                guard afterImage else { throw error }
                form.damage = error
                form.formEnd = position
                break
            }
            let id = String(decoding: header[0..<4], as: UTF8.self)
            var size = Int64(order.u32(header, 4))
            if kind == .rf64 && size == 0xFFFF_FFFF {
                size = try largeSize(id: id, ds64: ds64, format: format, offset: position)
            }
            var chunk = Chunk(id: id, offset: position, size: size)
            if size > formEnd - chunk.payloadOffset {
                let error = MetascrubError.truncated(format: format, path: "\(id) chunk", offset: position, needed: size - (formEnd - chunk.payloadOffset))
                // Only sample data ending the file may be cut: a chunk running into a trailer is a broken index.
                guard cutChunks.contains(id), formEnd == source.size else { throw error }
                form.damage = form.damage ?? error
                chunk.size = formEnd - chunk.payloadOffset
                chunk.cut = true
            }
            form.chunks.append(chunk)
            position = min(chunk.paddedEnd, formEnd)
        }
        if position != form.formEnd, form.chunks.contains(where: { garbageAfter.contains($0.id) }) {
            form.damage = MetascrubError.malformed(format: format, path: "\(magic) form", offset: position,
                                                   reason: "\(form.formEnd - position) stray bytes after the last chunk")
            form.formEnd = position
        }
        guard position == form.formEnd else {
            throw MetascrubError.malformed(format: format, path: "\(magic) form", offset: position, reason: "\(formEnd - position) stray bytes at the end of the form")
        }
        return form
    }

    /// An RF64 chunk's real size: `data` from the ds64 header, others from its table.
    private static func largeSize(id: String, ds64: [UInt8], format: String, offset: Int64) throws -> Int64 {
        if id == "data" { return u64le(ds64, 8) }
        let count = Int(ByteOrder.little.u32(ds64, 24))
        var at = 28
        for _ in 0..<min(count, 1024) where at + 12 <= ds64.count {
            if ds64[at..<at + 4].elementsEqual(id.utf8) { return u64le(ds64, at + 4) }
            at += 12
        }
        throw MetascrubError.malformed(format: format, path: "\(id) chunk", offset: offset, reason: "RF64 size placeholder without a ds64 entry")
    }

    /// A chunk as bytes (header, payload, pad byte for an odd size).
    func chunkBytes(_ id: String, _ payload: [UInt8]) -> [UInt8] {
        Array(id.utf8) + order.bytes(UInt32(payload.count)) + payload + (payload.count & 1 == 1 ? [0] : [])
    }
}
