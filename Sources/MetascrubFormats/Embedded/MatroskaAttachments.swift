// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// Matroska/WebM attachments whose bytes are an image (a `cover.jpg` AttachedFile), looked into as files of
/// their own (`EmbeddedFile`), and the cleaned image written back in place: the FileData element keeps its
/// offset and its length, its data is the cleaned image followed by a zero-filled Void for the bytes it lost, so
/// no position moves (SeekHead, Cues and the sizes of AttachedFile, Attachments and Segment stay valid) and only
/// the Attachments CRC-32 is recomputed, as for any other change in place.
extension MatroskaFormat.Scanner {
    /// Looks into the attachment's FileData when its bytes start like an image (the caller has checked that its
    /// MIME type says image too).
    mutating func itemiseAttachment(_ fileData: EBMLElement, item: Int) throws {
        if try found.embeddedFile(in: input, fileData.data, item: item) {
            layout.attachmentData[item] = (fileData.range, fileData.headerSize)
        }
    }
}

extension MatroskaLayout {
    /// The FileData element's bytes, the same length as before, holding `picture` (no longer than the old data):
    /// the same ID, the new data size, the picture, then a Void element over the rest. One byte left over cannot
    /// hold a Void (2 bytes at least), so the size field is written one byte longer instead (EBML allows it).
    func fileData(_ item: Int, picture: [UInt8], location: String) throws -> (offset: Int64, bytes: [UInt8]) {
        guard let data = attachmentData[item] else {
            throw MetascrubError.verificationFailed(reason: "the attachment at \(location) has no FileData to write its cleaned file into")
        }
        let (element, headerSize) = (data.element, data.headerSize)
        let sizeLength = headerSize - 2  // FileData's ID (0x465C) is two bytes long.
        let spare = element.upperBound - element.lowerBound - Int64(headerSize) - Int64(picture.count)
        guard spare >= 0 else {
            throw MetascrubError.verificationFailed(reason: "the cleaned file at \(location) is larger than the original, so it cannot be written in place")
        }
        let length = spare == 1 ? sizeLength + 1 : sizeLength
        guard let size = EBML.size(Int64(picture.count), length: length) else {
            throw MetascrubError.verificationFailed(reason: "the cleaned file at \(location) cannot be given an EBML size of \(length) bytes")
        }
        var bytes = [0x46, 0x5C] + size + picture
        if spare >= 2 {
            guard let void = EBML.void(spare) else {
                throw MetascrubError.verificationFailed(reason: "no Void element fits the \(spare) bytes freed at \(location)")
            }
            bytes += void + [UInt8](repeating: 0, count: Int(spare) - void.count)
        }
        return (element.lowerBound, bytes)
    }
}

extension EBML {
    /// `value` as an EBML data size of exactly `length` bytes (1...8), or nil when it does not fit (the all-ones
    /// value is reserved for an unknown size).
    static func size(_ value: Int64, length: Int) -> [UInt8]? {
        guard (1...8).contains(length), value >= 0, value <= (Int64(1) << (7 * Int64(length))) - 2 else { return nil }
        var bytes = [UInt8](repeating: 0, count: length)
        var v = value
        for i in stride(from: length - 1, through: 0, by: -1) {
            bytes[i] = UInt8(v & 0xFF)
            v >>= 8
        }
        bytes[0] |= UInt8(0x80 >> (length - 1))
        return bytes
    }
}

extension MatroskaFormat {
    /// An attachment is rewritten in place, so its cleaned file must not grow: an orientation the policy would
    /// bake inside it (a turned JPEG can come out larger) stays as a tag instead, with its reason. Depends only
    /// on the scan, so scan, clean and a second clean decide the same.
    public func settle(_ findings: [Finding], input: any ByteSource, scan: ScanResult<MatroskaLayout>, policy: Policy) throws -> [Finding] {
        guard !scan.layout.attachmentData.isEmpty else { return findings }
        var settled = findings
        for index in settled.indices where settled[index].disposition == .bake && Self.isInAttachment(index, scan) {
            settled.keep(index, because: "inside a Matroska attachment, which is cleaned in place: the picture is not turned")
        }
        return settled
    }

    /// Whether an ancestor of item `index` is an attachment looked into as an embedded file.
    static func isInAttachment(_ index: Int, _ scan: ScanResult<MatroskaLayout>) -> Bool {
        var parent = scan.items[index].parent
        var depth = 0
        while let p = parent, scan.items.indices.contains(p), depth < 64 {
            if scan.layout.attachmentData[p] != nil { return true }
            parent = scan.items[p].parent
            depth += 1
        }
        return false
    }
}
