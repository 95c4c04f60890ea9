// SPDX-License-Identifier: GPL-3.0-or-later
import CTurboJPEG

/// HEIC/AVIF → JPEG with memory bounded by one decoded image (issue 16's performance target). libheif's render
/// stays in libheif's planar buffer; the encoder gets YCbCr planes made from it at the JPEG's own sampling
/// (`tjCompressFromYUVPlanes`), freed as soon as the JPEG is coded; the check decodes the JPEG eight rows at a
/// time (`JPEGRowDecoder`) against the render. Against the interleaved path this saves the interleaving pass in
/// libheif, the 36 MB copy into Swift, the encoder's full-size colour conversion and the 36 MB decoded output.
public enum PlanarJPEG {
    /// One encode at one setting, measured.
    public struct Attempt: Sendable {
        public var bytes: [UInt8]
        public var settings: JPEGEncoder.Settings
        public var fidelity: Fidelity
    }

    /// What a conversion over a ladder of settings gave.
    public struct Conversion: Sendable {
        /// The first attempt reaching the threshold, or the last one tried when none did.
        public var attempt: Attempt
        /// "libheif 1.15.1".
        public var decoder: String
        /// The profile written into the JPEG (nil when there was none or `carryICC` was false).
        public var iccProfile: [UInt8]?
    }

    /// Converts a HEIF/AVIF file whose primary image is 8-bit without alpha, trying `ladder` in order until
    /// a setting reaches `minimumPSNR`. Nil when the image does not qualify (the caller takes the interleaved path).
    public static func convert(heif bytes: [UInt8], ladder: [JPEGEncoder.Settings], minimumPSNR: Double, carryICC: Bool,
                               segments: [[UInt8]]) throws -> Conversion? {
        guard let render = try HEIFDecoder.renderPlanes(bytes: bytes) else { return nil }
        let icc = carryICC ? render.iccProfile : nil
        var last: Attempt?
        for settings in ladder {
            let jpeg = try encode(render, settings: settings, iccProfile: icc, segments: segments)
            last = Attempt(bytes: jpeg, settings: settings, fidelity: try Fidelity.measure(render, jpeg: jpeg))
            if last?.fidelity.meets(minimumPSNR) == true { break }
        }
        return last.map { Conversion(attempt: $0, decoder: render.decoder, iccProfile: icc) }
    }

    static func encode(_ render: RGBPlanes, settings: JPEGEncoder.Settings, iccProfile: [UInt8]?,
                       segments: [[UInt8]]) throws -> [UInt8] {
        guard (1...100).contains(settings.quality) else {
            throw NativeError.library(name: "libturbojpeg", message: "quality \(settings.quality) is outside 1...100")
        }
        let (sampling, across, down): (TJSAMP, Int, Int)
        switch settings.subsampling {
        case .s420: (sampling, across, down) = (TJSAMP_420, 2, 2)
        case .s422: (sampling, across, down) = (TJSAMP_422, 2, 1)
        case .s444: (sampling, across, down) = (TJSAMP_444, 1, 1)
        case .gray: throw NativeError.library(name: "metascrub", message: "a colour render is not encoded as gray")
        }
        let ycc = YCbCrPlanes(render, across: across, down: down)
        guard let handle = tjInitCompress() else {
            throw NativeError.library(name: "libturbojpeg", message: String(cString: tjGetErrorStr2(nil)))
        }
        defer { tjDestroy(handle) }
        var output: UnsafeMutablePointer<UInt8>? = nil
        var size: UInt = 0
        defer { if let output { tjFree(output) } }
        let strides = [Int32(render.width), Int32(ycc.chromaWidth), Int32(ycc.chromaWidth)]
        let rc = ycc.y.withUnsafeBufferPointer { y in
            ycc.cb.withUnsafeBufferPointer { cb in
                ycc.cr.withUnsafeBufferPointer { cr in
                    var planes: [UnsafePointer<UInt8>?] = [y.baseAddress, cb.baseAddress, cr.baseAddress]
                    return tjCompressFromYUVPlanes(handle, &planes, Int32(render.width), strides, Int32(render.height),
                                                   Int32(sampling.rawValue), &output, &size, Int32(settings.quality),
                                                   Int32(TJFLAG_ACCURATEDCT))
                }
            }
        }
        guard rc == 0, let output, size > 4 else {
            throw NativeError.library(name: "libturbojpeg", message: String(cString: tjGetErrorStr2(handle)))
        }
        return try JPEGEncoder.withMarkers(Array(UnsafeBufferPointer(start: output, count: Int(size))),
                                           iccProfile: iccProfile, segments: segments)
    }
}

/// The JFIF colour conversion (BT.601, full range) of a render, chroma averaged over `across`×`down` blocks:
/// what libjpeg does inside `tjCompress2`, done here so the encoder needs no interleaved copy of the image.
struct YCbCrPlanes {
    var y: [UInt8]
    var cb: [UInt8]
    var cr: [UInt8]
    var chromaWidth: Int

    init(_ render: RGBPlanes, across: Int, down: Int) {
        let width = render.width, height = render.height
        let cw = (width + across - 1) / across, ch = (height + down - 1) / down
        chromaWidth = cw
        let p = render.planes, s = render.strides
        // 16-bit fixed point, rounded as libjpeg's jccolor.c rounds.
        y = [UInt8](unsafeUninitializedCapacity: width * height) { out, count in
            for row in 0..<height {
                let r = p[0] + row * s[0], g = p[1] + row * s[1], b = p[2] + row * s[2]
                let o = out.baseAddress! + row * width
                for x in 0..<width {
                    let red = 19595 * Int(r[x]), green = 38470 * Int(g[x]), blue = 7471 * Int(b[x])
                    o[x] = UInt8((red + green + blue + 32768) >> 16)
                }
            }
            count = width * height
        }
        var cb = [UInt8](repeating: 0, count: cw * ch), cr = cb
        for cy in 0..<ch {
            for cx in 0..<cw {
                var sr = 0, sg = 0, sb = 0, n = 0
                for row in (cy * down)..<min(height, cy * down + down) {
                    for x in (cx * across)..<min(width, cx * across + across) {
                        sr += Int(p[0][row * s[0] + x])
                        sg += Int(p[1][row * s[1] + x])
                        sb += Int(p[2][row * s[2] + x])
                        n += 1
                    }
                }
                // Cb = −0.16874 R − 0.33126 G + 0.5 B + 128 (and Cr alike) on the block's mean, rounded.
                let bias = n << 23 + n << 15, scale = n << 16
                let blueDifference: Int = -11059 * sr - 21709 * sg + 32768 * sb
                let redDifference: Int = 32768 * sr - 27439 * sg - 5329 * sb
                cb[cy * cw + cx] = UInt8(clamping: (blueDifference + bias) / scale)
                cr[cy * cw + cx] = UInt8(clamping: (redDifference + bias) / scale)
            }
        }
        self.cb = cb
        self.cr = cr
    }
}
