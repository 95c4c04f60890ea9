// SPDX-License-Identifier: GPL-3.0-or-later

/// A decoded image as a viewer shows it (orientation applied): 8-bit samples, interleaved, row-major without
/// padding. The unit every re-encode step hands on: decoders produce it, encoders and `Fidelity` consume it.
public struct Raster: Sendable, Equatable {
    public enum Layout: Int, Sendable {
        case gray = 1, rgb = 3, rgba = 4
    }

    public var width: Int
    public var height: Int
    public var layout: Layout
    public var pixels: [UInt8]

    public init(width: Int, height: Int, layout: Layout, pixels: [UInt8]) {
        precondition(pixels.count == width * height * layout.rawValue, "raster size does not match its pixels")
        self.width = width
        self.height = height
        self.layout = layout
        self.pixels = pixels
    }

    public var channels: Int { layout.rawValue }

    /// Whether any pixel is not fully opaque (an RGBA raster whose alpha is all 255 is opaque).
    public var hasTransparency: Bool {
        guard layout == .rgba else { return false }
        return pixels.withUnsafeBufferPointer { p in
            var i = 3
            while i < p.count {
                if p[i] != 255 { return true }
                i += 4
            }
            return false
        }
    }

    /// The same pixels as RGB (gray widened, alpha dropped): what fidelity is measured on.
    public func rgb() -> Raster {
        switch layout {
        case .rgb:
            return self
        case .gray:
            var out = [UInt8](repeating: 0, count: width * height * 3)
            for i in 0..<(width * height) {
                let v = pixels[i]
                out[i * 3] = v; out[i * 3 + 1] = v; out[i * 3 + 2] = v
            }
            return Raster(width: width, height: height, layout: .rgb, pixels: out)
        case .rgba:
            var out = [UInt8](repeating: 0, count: width * height * 3)
            out.withUnsafeMutableBufferPointer { o in
                pixels.withUnsafeBufferPointer { p in
                    for i in 0..<(width * height) {
                        o[i * 3] = p[i * 4]; o[i * 3 + 1] = p[i * 4 + 1]; o[i * 3 + 2] = p[i * 4 + 2]
                    }
                }
            }
            return Raster(width: width, height: height, layout: .rgb, pixels: out)
        }
    }
}

/// 16-bit grey or RGB samples (machine order), upright like `Raster`: what a lossless 16-bit output (PNG from a
/// 16-bit TIFF) is written from and checked against.
public struct WideRaster: Sendable, Equatable {
    public var width: Int
    public var height: Int
    /// `.gray` or `.rgb`.
    public var layout: Raster.Layout
    public var samples: [UInt16]

    public init(width: Int, height: Int, layout: Raster.Layout, samples: [UInt16]) {
        precondition(layout != .rgba && samples.count == width * height * layout.rawValue, "wide raster size does not match its samples")
        self.width = width
        self.height = height
        self.layout = layout
        self.samples = samples
    }

    /// The samples as RGBA, alpha opaque: what `PNGDecoder.decodeRGBA16` gives back.
    public var rgba: [UInt16] {
        var out = [UInt16](repeating: 0xFFFF, count: width * height * 4)
        let c = layout.rawValue
        for i in 0..<(width * height) {
            for k in 0..<3 { out[i * 4 + k] = samples[i * c + (c == 1 ? 0 : k)] }
        }
        return out
    }
}

/// How the chroma planes of a YCbCr image are sampled; a re-encode keeps the source's.
public enum ChromaSubsampling: String, Sendable, Codable {
    case s444 = "4:4:4", s422 = "4:2:2", s420 = "4:2:0", gray
}

/// A source image decoded for conversion: its displayed pixels and what an encoder should carry over.
public struct DecodedImage: Sendable {
    public var raster: Raster
    /// The embedded ICC profile, if the source has one.
    public var iccProfile: [UInt8]?
    /// The source's chroma sampling when known (nil: unknown, treated as 4:2:0).
    public var chroma: ChromaSubsampling?
    /// Bits per sample of the source's coded image.
    public var bitDepth: Int
    /// The library that decoded it, with its version: "libheif 1.15.1".
    public var decoder: String
    /// The same pixels at 16 bits, when the source has them (a 16-bit grey or RGB TIFF): a PNG keeps them.
    public var wide: WideRaster?

    public init(raster: Raster, iccProfile: [UInt8]?, chroma: ChromaSubsampling?, bitDepth: Int, decoder: String, wide: WideRaster? = nil) {
        self.raster = raster
        self.iccProfile = iccProfile
        self.chroma = chroma
        self.bitDepth = bitDepth
        self.decoder = decoder
        self.wide = wide
    }
}
