import MetascrubCore
import CPNG

/// PNG decoding through libpng's simplified API (`png_image_*`), whose errors come back in `image.message`
/// (the low-level API longjmps, which Swift cannot survive). Safe from any thread: each call has its own
/// `png_image`; nothing is printed.
public enum PNGDecoder {
    /// Decoded pixels as RGBA with 16 bits per channel, row-major without padding, so 8- and 16-bit images
    /// land in one representation.
    ///
    /// What libpng's simplified API allows, and so what this returns:
    /// * 8-bit sources (also palette, grayscale, tRNS) are read as 8-bit sRGB RGBA — not premultiplied, and
    ///   exactly the stored samples when the file is sRGB or has no gAMA/sRGB chunk — then widened by ×257
    ///   (0xAB -> 0xABAB). A file whose gAMA is far from sRGB is gamma-converted to sRGB by libpng.
    /// * 16-bit sources are read in libpng's only 16-bit format, "linear": samples are converted to linear
    ///   light using the file's gAMA/sRGB chunk (none: taken as already linear, so exact) and colour is
    ///   premultiplied by alpha (so colour under alpha 0 reads as 0).
    /// The result therefore depends on gAMA/sRGB chunks: compare images decoded with the same colour chunks.
    public static func decodeRGBA16(_ png: [UInt8]) throws -> (width: Int, height: Int, pixels: [UInt16]) {
        try png.withUnsafeBufferPointer { buffer -> (width: Int, height: Int, pixels: [UInt16]) in
            var image = png_image()
            image.version = cpng_image_version()
            // png_image_free is idempotent and keeps `message`; finish_read also frees.
            defer { png_image_free(&image) }
            guard let base = buffer.baseAddress, buffer.count > 0 else {
                throw NativeError.library(name: "libpng", message: "empty input")
            }
            guard png_image_begin_read_from_memory(&image, base, buffer.count) != 0 else { throw failure(&image) }
            let width = Int(image.width), height = Int(image.height)
            try PixelBudget.check(width: width, height: height, "PNG")
            let pixelCount = width * height
            if image.format & cpng_format_flag_linear() != 0 {
                image.format = cpng_format_linear_rgb_alpha()
                var pixels = [UInt16](repeating: 0, count: pixelCount * 4)
                let ok = pixels.withUnsafeMutableBytes { out in
                    png_image_finish_read(&image, nil, out.baseAddress, 0, nil)
                }
                guard ok != 0 else { throw failure(&image) }
                return (width, height, pixels)
            } else {
                image.format = cpng_format_rgba()
                var bytes = [UInt8](repeating: 0, count: pixelCount * 4)
                let ok = bytes.withUnsafeMutableBytes { out in
                    png_image_finish_read(&image, nil, out.baseAddress, 0, nil)
                }
                guard ok != 0 else { throw failure(&image) }
                return (width, height, bytes.map { UInt16($0) &* 257 })
            }
        }
    }

    private static func failure(_ image: inout png_image) -> NativeError {
        let message = withUnsafeBytes(of: &image.message) { raw -> String in
            let bytes = raw.prefix { $0 != 0 }
            return bytes.isEmpty ? "decode failed" : String(decoding: bytes, as: UTF8.self)
        }
        return NativeError.library(name: "libpng", message: message)
    }
}
