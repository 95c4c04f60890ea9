// SPDX-License-Identifier: GPL-3.0-or-later
import CTurboJPEG

/// HEIC → JPEG on the YCbCr planes (issue 16's performance target): an 8-bit 4:2:0 HEVC image decodes to the
/// samples JPEG codes, so they go to libjpeg-turbo as they are (`tjCompressFromYUVPlanes`) and the check decodes
/// the JPEG back to planes (`tjDecompressToYUVPlanes`), measured against the source planes in place. Against
/// the RGB path this skips libheif's colour conversion, the encoder's own conversion and chroma downsampling,
/// and two interleaved RGB copies; memory is the source planes plus one set of output planes (together one
/// RGB image), and each output set is freed before the next quality is tried.
public enum PlanarJPEG {
    /// One encode at one quality, measured.
    public struct Attempt: Sendable {
        public var bytes: [UInt8]
        public var settings: JPEGEncoder.Settings
        public var fidelity: Fidelity
    }

    /// What a conversion of a whole ladder gave.
    public struct Conversion: Sendable {
        /// The first attempt reaching the threshold, or the last one tried when none did.
        public var attempt: Attempt
        /// "libheif 1.15.1".
        public var decoder: String
        /// The profile written into the JPEG (nil when there was none or `carryICC` was false).
        public var iccProfile: [UInt8]?
    }

    /// Converts a HEIF file whose primary image qualifies (`HEIFDecoder.renderYCbCr`): each quality of
    /// `qualities` in turn at 4:2:0 (the source's own sampling) until one reaches `minimumPSNR`. Nil when the image
    /// does not qualify; the caller then takes the RGB path.
    public static func convert(heif bytes: [UInt8], qualities: [Int], minimumPSNR: Double, carryICC: Bool,
                               segments: [[UInt8]]) throws -> Conversion? {
        guard !qualities.isEmpty, let source = try HEIFDecoder.renderYCbCr(bytes: bytes) else { return nil }
        let icc = carryICC ? source.iccProfile : nil
        var last: Attempt?
        for quality in qualities {
            let settings = JPEGEncoder.Settings(quality: quality, subsampling: .s420)
            let jpeg = try encode(source, quality: quality, iccProfile: icc, segments: segments)
            let attempt = Attempt(bytes: jpeg, settings: settings, fidelity: try measure(jpeg, against: source))
            last = attempt
            if attempt.fidelity.meets(minimumPSNR) { break }
        }
        guard let last else { return nil }
        return Conversion(attempt: last, decoder: source.decoder, iccProfile: icc)
    }

    static func encode(_ source: YCbCrImage, quality: Int, iccProfile: [UInt8]?, segments: [[UInt8]]) throws -> [UInt8] {
        guard (1...100).contains(quality) else {
            throw NativeError.library(name: "libturbojpeg", message: "quality \(quality) is outside 1...100")
        }
        guard let handle = tjInitCompress() else {
            throw NativeError.library(name: "libturbojpeg", message: String(cString: tjGetErrorStr2(nil)))
        }
        defer { tjDestroy(handle) }
        var planes: [UnsafePointer<UInt8>?] = source.planes.map { Optional($0) }
        let strides = source.strides.map { Int32($0) }
        var output: UnsafeMutablePointer<UInt8>? = nil
        var size: UInt = 0
        defer { if let output { tjFree(output) } }
        let rc = tjCompressFromYUVPlanes(handle, &planes, Int32(source.width), strides, Int32(source.height),
                                         Int32(TJSAMP_420.rawValue), &output, &size, Int32(quality), Int32(TJFLAG_ACCURATEDCT))
        guard rc == 0, let output, size > 4 else {
            throw NativeError.library(name: "libturbojpeg", message: String(cString: tjGetErrorStr2(handle)))
        }
        return try JPEGEncoder.withMarkers(Array(UnsafeBufferPointer(start: output, count: Int(size))),
                                           iccProfile: iccProfile, segments: segments)
    }

    /// Decodes `jpeg` to its planes and compares them with the source's. Throws when it is not a 4:2:0 JPEG of
    /// the source's size (the conversion then failed).
    static func measure(_ jpeg: [UInt8], against source: YCbCrImage) throws -> Fidelity {
        guard let handle = tjInitDecompress() else {
            throw NativeError.library(name: "libturbojpeg", message: String(cString: tjGetErrorStr2(nil)))
        }
        defer { tjDestroy(handle) }
        var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colorspace: Int32 = 0
        guard tjDecompressHeader3(handle, jpeg, UInt(jpeg.count), &width, &height, &subsampling, &colorspace) == 0 else {
            throw NativeError.library(name: "libturbojpeg", message: String(cString: tjGetErrorStr2(handle)))
        }
        guard Int(width) == source.width, Int(height) == source.height, subsampling == Int32(TJSAMP_420.rawValue) else {
            throw NativeError.library(name: "metascrub", message:
                "re-encoded image is \(width)×\(height), the source shows \(source.width)×\(source.height)")
        }
        var y = [UInt8](repeating: 0, count: source.width * source.height)
        var cb = [UInt8](repeating: 0, count: source.chromaWidth * source.chromaHeight)
        var cr = cb
        let rc = y.withUnsafeMutableBufferPointer { yp in
            cb.withUnsafeMutableBufferPointer { cbp in
                cr.withUnsafeMutableBufferPointer { crp in
                    var planes: [UnsafeMutablePointer<UInt8>?] = [yp.baseAddress, cbp.baseAddress, crp.baseAddress]
                    var strides: [Int32] = [Int32(source.width), Int32(source.chromaWidth), Int32(source.chromaWidth)]
                    return tjDecompressToYUVPlanes(handle, jpeg, UInt(jpeg.count), &planes, width, &strides, height,
                                                   Int32(TJFLAG_ACCURATEDCT))
                }
            }
        }
        guard rc == 0 else {
            throw NativeError.library(name: "libturbojpeg", message: String(cString: tjGetErrorStr2(handle)))
        }
        return y.withUnsafeBufferPointer { yp in
            cb.withUnsafeBufferPointer { cbp in
                cr.withUnsafeBufferPointer { crp in
                    Fidelity.measure(planes: source, [yp.baseAddress!, cbp.baseAddress!, crp.baseAddress!],
                                     strides: [source.width, source.chromaWidth, source.chromaWidth])
                }
            }
        }
    }
}
