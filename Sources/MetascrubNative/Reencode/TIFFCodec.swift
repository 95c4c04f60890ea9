// SPDX-License-Identifier: GPL-3.0-or-later
import CTIFFBridge

/// How a TIFF image's samples are coded: what a re-encode of turned pixels must reproduce.
public struct TIFFCoding: Sendable, Equatable {
    public var width: Int
    public var height: Int
    public var bitsPerSample: Int
    public var samplesPerPixel: Int
    public var sampleFormat: Int
    public var photometric: Int
    public var compression: Int
    public var predictor: Int
    public var extraSamples: [UInt16]
    public var bigEndian: Bool
    /// The Orientation tag (1 when absent); never applied by decoding, never written by encoding.
    public var orientation: Int = 1

    /// Bytes of one pixel in `TIFFSamples.pixels`.
    public var bytesPerPixel: Int { samplesPerPixel * bitsPerSample / 8 }
}

/// A TIFF image's stored samples: rows in file order (no orientation applied), interleaved, 16-bit samples in
/// the machine's byte order.
public struct TIFFSamples: Sendable, Equatable {
    public var coding: TIFFCoding
    public var pixels: [UInt8]
    /// The embedded ICC profile (decoding only).
    public var iccProfile: [UInt8]?

    public init(coding: TIFFCoding, pixels: [UInt8], iccProfile: [UInt8]? = nil) {
        self.coding = coding
        self.pixels = pixels
        self.iccProfile = iccProfile
    }
}

/// TIFF samples through libtiff (loaded on first use): decoding and encoding only; the container around them is
/// written by the TIFF handler, byte for byte.
public enum TIFFCodec {
    /// "libtiff 4.5.0"; "libtiff" when the library cannot be loaded.
    public static var libraryName: String {
        guard let text = tiffbridge_version().map({ String(cString: $0) }),
              let range = text.range(of: "Version ") else { return "libtiff" }
        return "libtiff " + text[range.upperBound...].prefix { !$0.isWhitespace }
    }

    /// The first image's samples (strips of interleaved 8- or 16-bit samples only).
    public static func decodeSamples(_ tiff: [UInt8]) throws -> TIFFSamples {
        var info = tiffbridge_image()
        var icc: UnsafeMutablePointer<UInt8>?, iccLength = 0
        let (pixels, _) = try call { error in
            var out: UnsafeMutablePointer<UInt8>?, length = 0
            let rc = tiff.withUnsafeBufferPointer {
                tiffbridge_decode_samples($0.baseAddress, $0.count, &info, &out, &length, &icc, &iccLength, error, 256)
            }
            return (rc, out, length)
        }
        defer { tiffbridge_free(icc) }
        return TIFFSamples(coding: coding(info), pixels: pixels, iccProfile: icc.map { Array(UnsafeBufferPointer(start: $0, count: iccLength)) })
    }

    /// The first image as 8-bit RGBA in stored row order, with its ICC profile: for images `decodeSamples`
    /// does not take (palette, CMYK, YCbCr, JPEG-compressed, tiled). libtiff premultiplies unassociated alpha.
    public static func decodeRGBA(_ tiff: [UInt8]) throws -> (coding: TIFFCoding, raster: Raster, icc: [UInt8]?) {
        var info = tiffbridge_image()
        var icc: UnsafeMutablePointer<UInt8>?, iccLength = 0
        let (pixels, _) = try call { error in
            var out: UnsafeMutablePointer<UInt8>?, length = 0
            let rc = tiff.withUnsafeBufferPointer {
                tiffbridge_decode_rgba($0.baseAddress, $0.count, &info, &out, &length, &icc, &iccLength, error, 256)
            }
            return (rc, out, length)
        }
        defer { tiffbridge_free(icc) }
        let profile = icc.map { Array(UnsafeBufferPointer(start: $0, count: iccLength)) }
        let coding = coding(info)
        return (coding, Raster(width: coding.width, height: coding.height, layout: .rgba, pixels: pixels), profile)
    }

    /// A single-image TIFF of `samples`, coded as `samples.coding` says, with libtiff's default strip size.
    public static func encode(_ samples: TIFFSamples) throws -> [UInt8] {
        var info = image(samples.coding)
        return try call { error in
            var out: UnsafeMutablePointer<UInt8>?, length = 0
            let rc = samples.pixels.withUnsafeBufferPointer {
                tiffbridge_encode_samples(&info, $0.baseAddress, $0.count, &out, &length, error, 256)
            }
            return (rc, out, length)
        }.0
    }

    /// Runs a bridge call that hands out a malloc'd buffer; copies it and frees it, or throws libtiff's message.
    private static func call(_ body: (UnsafeMutablePointer<CChar>) -> (Int32, UnsafeMutablePointer<UInt8>?, Int)) throws -> ([UInt8], Int) {
        var message = [CChar](repeating: 0, count: 256)
        let (rc, out, length) = message.withUnsafeMutableBufferPointer { body($0.baseAddress!) }
        defer { tiffbridge_free(out) }
        guard rc == 0, let out else {
            throw NativeError.library(name: "libtiff", message: String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return (Array(UnsafeBufferPointer(start: out, count: length)), length)
    }

    private static func coding(_ i: tiffbridge_image) -> TIFFCoding {
        let extras = withUnsafeBytes(of: i.extra_samples) { Array($0.bindMemory(to: UInt16.self).prefix(Int(i.extra_count))) }
        return TIFFCoding(width: Int(i.width), height: Int(i.height), bitsPerSample: Int(i.bits_per_sample),
                          samplesPerPixel: Int(i.samples_per_pixel), sampleFormat: Int(i.sample_format), photometric: Int(i.photometric),
                          compression: Int(i.compression), predictor: Int(i.predictor), extraSamples: extras, bigEndian: i.big_endian != 0,
                          orientation: Int(i.orientation))
    }

    private static func image(_ c: TIFFCoding) -> tiffbridge_image {
        var i = tiffbridge_image()
        i.width = UInt32(c.width); i.height = UInt32(c.height)
        i.bits_per_sample = UInt16(c.bitsPerSample); i.samples_per_pixel = UInt16(c.samplesPerPixel)
        i.sample_format = UInt16(c.sampleFormat); i.photometric = UInt16(c.photometric)
        i.compression = UInt16(c.compression); i.predictor = UInt16(c.predictor)
        i.planar_config = 1; i.fill_order = 1
        i.extra_count = UInt16(min(c.extraSamples.count, 8))
        withUnsafeMutableBytes(of: &i.extra_samples) { raw in
            for (k, v) in c.extraSamples.prefix(8).enumerated() { raw.storeBytes(of: v, toByteOffset: k * 2, as: UInt16.self) }
        }
        i.big_endian = c.bigEndian ? 1 : 0
        return i
    }
}
