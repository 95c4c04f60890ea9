// SPDX-License-Identifier: GPL-3.0-or-later
import CHeif

/// Metadata a conversion copies into its output: only what is left in an already cleaned (and verified)
/// source, so the policy decided every entry before it gets here.
public struct CarriedMetadata: Sendable, Equatable {
    /// A TIFF-structured EXIF block (from the byte-order mark on).
    public var exif: [UInt8]?
    /// An XMP packet.
    public var xmp: [UInt8]?

    public init(exif: [UInt8]? = nil, xmp: [UInt8]? = nil) {
        self.exif = exif
        self.xmp = xmp
    }

    public var isEmpty: Bool { exif == nil && xmp == nil }

    /// APP1 segments for a JPEG: `Exif\0\0` + TIFF, then the XMP packet under Adobe's namespace. A block too
    /// large for one segment is not written (the caller's re-scan would not see it either way).
    public var jpegSegments: [[UInt8]] {
        var out: [[UInt8]] = []
        if let exif, let s = Self.app1(Array("Exif".utf8) + [0, 0] + exif) { out.append(s) }
        if let xmp, let s = Self.app1(Array("http://ns.adobe.com/xap/1.0/".utf8) + [0] + xmp) { out.append(s) }
        return out
    }

    /// PNG chunks: `eXIf` (TIFF) and an uncompressed `iTXt` with keyword `XML:com.adobe.xmp`.
    public var pngChunks: [[UInt8]] {
        var out: [[UInt8]] = []
        if let exif { out.append(PNGEncoder.chunk("eXIf", exif)) }
        if let xmp { out.append(PNGEncoder.chunk("iTXt", Array("XML:com.adobe.xmp".utf8) + [0, 0, 0, 0, 0] + xmp)) }
        return out
    }

    static func app1(_ payload: [UInt8]) -> [UInt8]? {
        let length = payload.count + 2
        guard length <= 0xFFFF else { return nil }
        return [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
    }

    /// The Exif and XMP items of a HEIF's primary image, through libheif (no pixel is decoded).
    public static func fromHEIF(_ bytes: [UInt8]) throws -> CarriedMetadata {
        guard let context = heif_context_alloc() else { throw NativeError.library(name: "libheif", message: "out of memory") }
        defer { heif_context_free(context) }
        try HEIFDecoder.check(bytes.withUnsafeBytes { heif_context_read_from_memory(context, $0.baseAddress, $0.count, nil) })
        var handle: OpaquePointer?
        try HEIFDecoder.check(heif_context_get_primary_image_handle(context, &handle))
        guard let handle else { return CarriedMetadata() }
        defer { heif_image_handle_release(handle) }
        var out = CarriedMetadata()
        let count = Int(heif_image_handle_get_number_of_metadata_blocks(handle, nil))
        guard count > 0, count < 1024 else { return out }
        var ids = [heif_item_id](repeating: 0, count: count)
        let got = Int(heif_image_handle_get_list_of_metadata_block_IDs(handle, nil, &ids, Int32(count)))
        for id in ids.prefix(got) {
            let type = heif_image_handle_get_metadata_type(handle, id).map { String(cString: $0) } ?? ""
            let content = heif_image_handle_get_metadata_content_type(handle, id).map { String(cString: $0) } ?? ""
            let size = heif_image_handle_get_metadata_size(handle, id)
            guard size > 0, size < 1 << 24 else { continue }
            var data = [UInt8](repeating: 0, count: size)
            try HEIFDecoder.check(data.withUnsafeMutableBytes { heif_image_handle_get_metadata(handle, id, $0.baseAddress) })
            if type == "Exif", out.exif == nil, data.count > 4 {
                // ISO/IEC 23008-12 A.2.1: a 4-byte offset from after itself to the TIFF header.
                let offset = Int(data[0]) << 24 | Int(data[1]) << 16 | Int(data[2]) << 8 | Int(data[3])
                if offset >= 0, 4 + offset + 8 <= data.count { out.exif = Array(data[(4 + offset)...]) }
            } else if type == "mime", content == "application/rdf+xml", out.xmp == nil {
                out.xmp = data
            }
        }
        return out
    }
}
