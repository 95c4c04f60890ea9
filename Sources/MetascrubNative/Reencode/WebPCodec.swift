// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import CWebP

/// WebP pixels through libwebp's simple API, for baking an orientation by re-encoding, and the RIFF splice
/// that puts the new image chunk into an already cleaned container (byte-exact container writing is ours).
public enum WebPCodec {
    public static var encoderName: String {
        let v = WebPGetEncoderVersion()
        return "libwebp \(v >> 16).\(v >> 8 & 0xFF).\(v & 0xFF)"
    }

    /// The still image as 8-bit RGBA (animations are not decoded here).
    public static func decodeRGBA(_ webp: [UInt8]) throws -> Raster {
        var width: Int32 = 0, height: Int32 = 0
        return try webp.withUnsafeBufferPointer { p -> Raster in
            guard WebPGetInfo(p.baseAddress, p.count, &width, &height) != 0, width > 0, height > 0 else {
                throw NativeError.library(name: "libwebp", message: "not a decodable WebP image")
            }
            try PixelBudget.check(width: Int(width), height: Int(height), "WebP")
            guard let out = WebPDecodeRGBA(p.baseAddress, p.count, &width, &height) else {
                throw NativeError.library(name: "libwebp", message: "decoding failed")
            }
            defer { WebPFree(out) }
            return Raster(width: Int(width), height: Int(height), layout: .rgba,
                          pixels: Array(UnsafeBufferPointer(start: out, count: Int(width) * Int(height) * 4)))
        }
    }

    /// A complete WebP file: lossless when `quality` is nil, lossy VP8 at `quality` (0...100) otherwise.
    public static func encode(_ raster: Raster, quality: Int?) throws -> [UInt8] {
        let rgba = raster.layout == .rgba ? raster : Raster(width: raster.width, height: raster.height, layout: .rgba,
                                                             pixels: rgbaPixels(raster))
        var output: UnsafeMutablePointer<UInt8>?
        let size = rgba.pixels.withUnsafeBufferPointer { p -> Int in
            if let quality {
                return WebPEncodeRGBA(p.baseAddress, Int32(rgba.width), Int32(rgba.height), Int32(rgba.width * 4), Float(quality), &output)
            }
            return WebPEncodeLosslessRGBA(p.baseAddress, Int32(rgba.width), Int32(rgba.height), Int32(rgba.width * 4), &output)
        }
        guard size > 0, let output else { throw NativeError.library(name: "libwebp", message: "encoding failed") }
        defer { WebPFree(output) }
        return Array(UnsafeBufferPointer(start: output, count: size))
    }

    private static func rgbaPixels(_ raster: Raster) -> [UInt8] {
        let rgb = raster.rgb()
        var out = [UInt8](repeating: 255, count: rgb.width * rgb.height * 4)
        for i in 0..<(rgb.width * rgb.height) {
            out[i * 4] = rgb.pixels[i * 3]; out[i * 4 + 1] = rgb.pixels[i * 3 + 1]; out[i * 4 + 2] = rgb.pixels[i * 3 + 2]
        }
        return out
    }

    /// `container` (an extended-format WebP with one still image) with its `VP8 `/`VP8L` chunk (and any `ALPH`)
    /// replaced by the image chunks of `encoded`, the VP8X canvas size set to the new image's, and the RIFF size
    /// fixed. Every other chunk stays as it was, in place.
    public static func replacingImage(in container: [UInt8], with encoded: [UInt8], width: Int, height: Int) throws -> [UInt8] {
        let old = try chunks(container), new = try chunks(encoded)
        let image: Set<String> = ["VP8 ", "VP8L", "ALPH"]
        guard old.contains(where: { $0.fourCC == "VP8X" }), !old.contains(where: { $0.fourCC == "ANIM" || $0.fourCC == "ANMF" }) else {
            throw NativeError.library(name: "metascrub", message: "only a still extended-format WebP can take a re-encoded image")
        }
        let replacement = new.filter { image.contains($0.fourCC) }.flatMap { Array(encoded[$0.range]) }
        guard !replacement.isEmpty else { throw NativeError.library(name: "libwebp", message: "encoder output has no image chunk") }
        var body: [UInt8] = Array("WEBP".utf8)
        var placed = false
        for chunk in old {
            if image.contains(chunk.fourCC) {
                if !placed { body += replacement; placed = true }
                continue
            }
            var bytes = Array(container[chunk.range])
            if chunk.fourCC == "VP8X", chunk.range.count >= 18 {
                let w = width - 1, h = height - 1
                bytes[12] = UInt8(w & 0xFF); bytes[13] = UInt8(w >> 8 & 0xFF); bytes[14] = UInt8(w >> 16 & 0xFF)
                bytes[15] = UInt8(h & 0xFF); bytes[16] = UInt8(h >> 8 & 0xFF); bytes[17] = UInt8(h >> 16 & 0xFF)
                // The alpha flag follows what the new image chunks hold.
                let alpha = new.contains { $0.fourCC == "ALPH" } || (new.first { $0.fourCC == "VP8L" }.map { encoded[$0.range.lowerBound + 8 + 4] & 0x10 != 0 } ?? false)
                bytes[8] = alpha ? bytes[8] | 0x10 : bytes[8] & ~0x10
            }
            body += bytes
        }
        let size = UInt32(body.count)
        return Array("RIFF".utf8) + [UInt8(size & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size >> 16 & 0xFF), UInt8(size >> 24)] + body
    }

    struct Chunk {
        var fourCC: String
        var range: Range<Int>
    }

    /// Top-level chunks (header through pad byte) of a RIFF WEBP file.
    static func chunks(_ webp: [UInt8]) throws -> [Chunk] {
        guard webp.count >= 12, webp[0..<4].elementsEqual("RIFF".utf8), webp[8..<12].elementsEqual("WEBP".utf8) else {
            throw NativeError.library(name: "metascrub", message: "not a RIFF WEBP file")
        }
        let end = min(webp.count, 8 + (Int(webp[4]) | Int(webp[5]) << 8 | Int(webp[6]) << 16 | Int(webp[7]) << 24))
        var out: [Chunk] = []
        var at = 12
        while at + 8 <= end {
            let size = Int(webp[at + 4]) | Int(webp[at + 5]) << 8 | Int(webp[at + 6]) << 16 | Int(webp[at + 7]) << 24
            let next = at + 8 + size + (size & 1)
            guard next <= end || at + 8 + size == end else { throw NativeError.library(name: "metascrub", message: "WebP chunk runs past the file") }
            out.append(Chunk(fourCC: String(decoding: webp[at..<(at + 4)], as: UTF8.self), range: at..<min(next, end)))
            at = next
        }
        return out
    }
}
