// SPDX-License-Identifier: GPL-3.0-or-later
import CPNG

/// PNG encoding through libpng's simplified API (errors come back in `image.message`, never by longjmp).
/// Lossless by nature: decoding the result gives `raster` exactly.
public enum PNGEncoder {
    public static var encoderName: String { "libpng " + String(cString: png_get_libpng_ver(nil)) }

    /// Encodes `raster`; with an ICC profile, an `iCCP` chunk replaces the `sRGB` chunk libpng writes.
    /// `chunks` (complete chunks: length, type, data, CRC) go after the header.
    public static func encode(_ raster: Raster, iccProfile: [UInt8]? = nil, chunks: [[UInt8]] = []) throws -> [UInt8] {
        var image = png_image()
        image.version = cpng_image_version()
        image.width = UInt32(raster.width)
        image.height = UInt32(raster.height)
        switch raster.layout {
        case .gray: image.format = cpng_format_gray()
        case .rgb: image.format = cpng_format_rgb()
        case .rgba: image.format = cpng_format_rgba()
        }
        defer { png_image_free(&image) }
        let out = try raster.pixels.withUnsafeBytes { try write(&image, $0, stride: Int32(raster.width * raster.channels)) }
        return try finish(out, iccProfile: iccProfile, chunks: chunks)
    }

    /// Encodes 16-bit grey or RGB samples as a 16-bit PNG, unchanged. libpng's simplified API writes 16-bit
    /// samples only as "linear" and labels them with a gAMA of 1.0; these are not linear (they are what the
    /// source stored), so that label is removed: decoders then read the samples as the source's.
    public static func encode(_ wide: WideRaster, iccProfile: [UInt8]? = nil, chunks: [[UInt8]] = []) throws -> [UInt8] {
        var image = png_image()
        image.version = cpng_image_version()
        image.width = UInt32(wide.width)
        image.height = UInt32(wide.height)
        image.format = cpng_format_flag_linear() | (wide.layout == .gray ? cpng_format_gray() : cpng_format_rgb())
        defer { png_image_free(&image) }
        // The simplified API's stride counts components, not bytes.
        let out = try wide.samples.withUnsafeBytes { try write(&image, $0, stride: Int32(wide.width * wide.layout.rawValue)) }
        return try finish(removing(["sRGB", "gAMA", "cHRM"], from: out), iccProfile: iccProfile, chunks: chunks)
    }

    /// libpng's simplified writer into memory: the first call sizes the buffer, the second fills it.
    private static func write(_ image: inout png_image, _ pixels: UnsafeRawBufferPointer, stride: Int32) throws -> [UInt8] {
        var size: png_alloc_size_t = 0
        guard png_image_write_to_memory(&image, nil, &size, 0, pixels.baseAddress, stride, nil) != 0, size > 0 else {
            throw failure(&image)
        }
        var out = [UInt8](repeating: 0, count: Int(size))
        let ok = out.withUnsafeMutableBytes { png_image_write_to_memory(&image, $0.baseAddress, &size, 0, pixels.baseAddress, stride, nil) }
        guard ok != 0 else { throw failure(&image) }
        out.removeSubrange(Int(size)...)
        return out
    }

    /// libpng's output with the ICC profile (in place of the sRGB chunks) and `chunks` after the header.
    private static func finish(_ png: [UInt8], iccProfile: [UInt8]?, chunks: [[UInt8]]) throws -> [UInt8] {
        var out = png
        var extra: [UInt8] = []
        if let iccProfile, !iccProfile.isEmpty {
            // "ICC profile" is the neutral label metascrub's PNG scanner does not list as an item.
            out = removing(["sRGB", "gAMA", "cHRM"], from: out)
            extra += chunk("iCCP", Array("ICC profile".utf8) + [0, 0] + (try Zlib.deflate(iccProfile)))
        }
        for c in chunks { extra += c }
        guard !extra.isEmpty else { return out }
        // After the signature (8) and IHDR (4 + 4 + 13 + 4): before PLTE and IDAT, as iCCP must be.
        let at = 33
        return Array(out[..<at]) + extra + Array(out[at...])
    }

    /// A complete chunk: length, type, data, CRC-32 over type and data.
    public static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typeBytes = Array(type.utf8)
        let crc = Zlib.crc32(typeBytes + data)
        let n = UInt32(data.count)
        return [UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] + typeBytes + data
            + [UInt8(crc >> 24), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc & 0xFF)]
    }

    /// `png` without the chunks of the given types (libpng's own output: well formed by construction).
    static func removing(_ types: Set<String>, from png: [UInt8]) -> [UInt8] {
        var out = Array(png[..<8])
        var at = 8
        while at + 12 <= png.count {
            let length = Int(png[at]) << 24 | Int(png[at + 1]) << 16 | Int(png[at + 2]) << 8 | Int(png[at + 3])
            let end = at + 12 + length
            guard end <= png.count else { break }
            let type = String(decoding: png[(at + 4)..<(at + 8)], as: UTF8.self)
            if !types.contains(type) { out += png[at..<end] }
            at = end
        }
        return out
    }

    private static func failure(_ image: inout png_image) -> NativeError {
        let message = withUnsafeBytes(of: &image.message) { raw -> String in
            let bytes = raw.prefix { $0 != 0 }
            return bytes.isEmpty ? "encode failed" : String(decoding: bytes, as: UTF8.self)
        }
        return NativeError.library(name: "libpng", message: message)
    }
}
