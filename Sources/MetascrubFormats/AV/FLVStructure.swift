// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// The FLV structure libavformat does not itemise: bytes between the header's fields and the first tag (the
/// header's DataOffset says where that is) and tags of a type no player reads (only audio 8, video 9 and script
/// data 18 are defined). Each is an `unknown` item; removing one makes the clean a libavformat remux, which
/// writes a header of nine bytes and only the tags of the kept streams.
enum FLVStructure {
    static let knownTags: Set<UInt8> = [8, 9, 18]
    /// Tags walked at most: enough for hours of video; the rest is left to libavformat.
    static let maxTags = 1 << 20

    static func items(_ input: any ByteSource, options: ScanOptions) throws -> [MetadataItem] {
        let format = AVFormat.format
        guard input.size >= 13 else { return [] }
        let head = try input.read(at: 0, count: 9, format: format, path: "FLV header")
        let dataOffset = Int64(BigEndian.u32(head, 5))
        var found: [MetadataItem] = []
        if dataOffset > 9, dataOffset <= input.size,
           try input.read(at: 9, count: Int(min(dataOffset - 9, 1 << 20)), format: format, path: "FLV header")
               .contains(where: { $0 != 0 }) {
            found.append(MetadataItem(key: "flv:header-slack", category: .content, location: "FLV header", offset: 9,
                                      length: dataOffset - 9, detail: "\(dataOffset - 9) bytes after the FLV header's fields",
                                      isUnknown: true))
        }
        var at = dataOffset + 4, tags = 0
        while at + 11 <= input.size, tags < maxTags {
            let tag = try input.read(at: at, count: 11, format: format, path: "FLV tag")
            let size = Int64(tag[1]) << 16 | Int64(tag[2]) << 8 | Int64(tag[3])
            let type = tag[0] & 0x1F
            if !knownTags.contains(type) {
                found.append(MetadataItem(key: "flv:tag/\(type)", category: .content, location: "FLV tag at \(at)",
                                          offset: at, length: min(11 + size, input.size - at),
                                          detail: "FLV tag of type \(type) no player reads, \(size) bytes",
                                          isUnknown: true))
            }
            at += 11 + size + 4
            tags += 1
        }
        return found
    }
}
