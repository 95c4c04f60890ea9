// SPDX-License-Identifier: GPL-3.0-or-later
import CTurboJPEG

/// Baseline JPEG encoding through libturbojpeg (TurboJPEG 2.1 API), for conversions and re-encodes.
///
/// TurboJPEG 2.1 cannot attach an ICC profile or other markers, so they are spliced in after the JFIF APP0
/// segment here: byte-exact marker writing is ours, pixel coding is libjpeg-turbo's.
public enum JPEGEncoder {
    public struct Settings: Sendable, Equatable {
        /// libjpeg quality, 1...100 (the IJG scaling of the standard quantisation tables).
        public var quality: Int
        public var subsampling: ChromaSubsampling

        public init(quality: Int, subsampling: ChromaSubsampling) {
            self.quality = quality
            self.subsampling = subsampling
        }

        /// "quality 92, 4:2:0, accurate DCT": what the report says was done.
        public var summary: String { "quality \(quality), \(subsampling.rawValue), accurate DCT" }
    }

    public static var encoderName: String { "libjpeg-turbo (TurboJPEG)" }

    /// Encodes `raster` (gray, RGB, or RGBA that is fully opaque: alpha is ignored) and inserts, after the JFIF
    /// header, the ICC profile as APP2 `ICC_PROFILE` segments and then `segments` (complete APPn segments,
    /// marker included) as given.
    public static func encode(_ raster: Raster, settings: Settings, iccProfile: [UInt8]? = nil,
                              segments: [[UInt8]] = []) throws -> [UInt8] {
        guard (1...100).contains(settings.quality) else {
            throw NativeError.library(name: "libturbojpeg", message: "quality \(settings.quality) is outside 1...100")
        }
        guard let handle = tjInitCompress() else {
            throw NativeError.library(name: "libturbojpeg", message: String(cString: tjGetErrorStr2(nil)))
        }
        defer { tjDestroy(handle) }
        let format: TJPF
        switch raster.layout {
        case .gray: format = TJPF_GRAY
        case .rgb: format = TJPF_RGB
        case .rgba: format = TJPF_RGBA
        }
        let subsampling = raster.layout == .gray ? TJSAMP_GRAY : tjSubsampling(settings.subsampling)
        var output: UnsafeMutablePointer<UInt8>? = nil
        var size: UInt = 0
        defer { if let output { tjFree(output) } }
        let rc = raster.pixels.withUnsafeBufferPointer { p in
            tjCompress2(handle, p.baseAddress, Int32(raster.width), Int32(raster.width * raster.channels), Int32(raster.height),
                        Int32(format.rawValue), &output, &size, Int32(subsampling.rawValue), Int32(settings.quality),
                        Int32(TJFLAG_ACCURATEDCT))
        }
        guard rc == 0, let output, size > 4 else {
            throw NativeError.library(name: "libturbojpeg", message: String(cString: tjGetErrorStr2(handle)))
        }
        return try withMarkers(Array(UnsafeBufferPointer(start: output, count: Int(size))), iccProfile: iccProfile, segments: segments)
    }

    /// `coded` with the ICC profile (APP2 `ICC_PROFILE`) and then `segments` inserted after the JFIF header.
    static func withMarkers(_ coded: [UInt8], iccProfile: [UInt8]?, segments: [[UInt8]]) throws -> [UInt8] {
        var inserted: [UInt8] = []
        if let iccProfile, !iccProfile.isEmpty { inserted += try iccSegments(iccProfile) }
        for segment in segments { inserted += segment }
        guard !inserted.isEmpty else { return coded }
        let at = insertionPoint(coded)
        return Array(coded[..<at]) + inserted + Array(coded[at...])
    }

    /// An ICC profile as APP2 `ICC_PROFILE` segments (ICC.1 Annex B.4: at most 65519 profile bytes each,
    /// numbered from 1, at most 255 of them).
    public static func iccSegments(_ profile: [UInt8]) throws -> [UInt8] {
        let chunk = 65519
        let count = (profile.count + chunk - 1) / chunk
        guard count <= 255 else {
            throw NativeError.library(name: "metascrub", message: "ICC profile of \(profile.count) bytes does not fit in JPEG APP2 segments")
        }
        var out: [UInt8] = []
        for index in 0..<count {
            let part = profile[(index * chunk)..<min(profile.count, (index + 1) * chunk)]
            let length = 2 + 12 + 2 + part.count
            out += [0xFF, 0xE2, UInt8(length >> 8), UInt8(length & 0xFF)]
            out += Array("ICC_PROFILE".utf8) + [0, UInt8(index + 1), UInt8(count)]
            out += part
        }
        return out
    }

    /// After SOI and, when present, the JFIF APP0 segment libjpeg writes first.
    static func insertionPoint(_ jpeg: [UInt8]) -> Int {
        guard jpeg.count > 6, jpeg[2] == 0xFF, jpeg[3] == 0xE0 else { return 2 }
        let length = Int(jpeg[4]) << 8 | Int(jpeg[5])
        return min(jpeg.count, 4 + length)
    }

    private static func tjSubsampling(_ s: ChromaSubsampling) -> TJSAMP {
        switch s {
        case .s444: TJSAMP_444
        case .s422: TJSAMP_422
        case .s420: TJSAMP_420
        case .gray: TJSAMP_GRAY
        }
    }
}
