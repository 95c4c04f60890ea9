// SPDX-License-Identifier: GPL-3.0-or-later
import CJPEGStream
import Foundation

/// HEIC/AVIF → JPEG with memory bounded by one decoded image (issue 16's performance target). libheif's render
/// stays in libheif's planar buffer; libjpeg encodes it sixteen rows at a time (`jpeg_row_encoder`, TurboJPEG's
/// settings) and the check decodes the JPEG eight rows at a time (`jpeg_stream`) against it. Against the
/// interleaved path this saves libheif's interleaving pass and its second buffer, the copy into Swift, and the
/// whole decoded output the check used to hold.
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
            throw NativeError.library(name: "libjpeg", message: "quality \(settings.quality) is outside 1...100")
        }
        let (across, down): (Int32, Int32)
        switch settings.subsampling {
        case .s420: (across, down) = (2, 2)
        case .s422: (across, down) = (2, 1)
        case .s444: (across, down) = (1, 1)
        case .gray: throw NativeError.library(name: "metascrub", message: "a colour render is not encoded as gray")
        }
        var message = [CChar](repeating: 0, count: 200)
        func failure() -> NativeError {
            .library(name: "libjpeg", message: String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        let width = render.width, height = render.height
        guard let encoder = jpeg_row_encoder_begin(Int32(width), Int32(height), Int32(settings.quality), across, down, &message) else {
            throw failure()
        }
        defer { jpeg_row_encoder_free(encoder) }
        // Sixteen rows at a time (one 4:2:0 MCU row), interleaved from the planes.
        let bandRows = 16
        var band = [UInt8](repeating: 0, count: width * 3 * bandRows)
        var top = 0
        while top < height {
            let rows = min(bandRows, height - top)
            let rc = band.withUnsafeMutableBufferPointer { out -> Int32 in
                for row in 0..<rows {
                    let o = out.baseAddress! + row * width * 3
                    for c in 0..<3 {
                        let p = render.planes[c] + (top + row) * render.strides[c]
                        for x in 0..<width { o[x * 3 + c] = p[x] }
                    }
                }
                return jpeg_row_encoder_write(encoder, out.baseAddress, Int32(rows), &message)
            }
            guard rc == 0 else { throw failure() }
            top += rows
        }
        var output: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        guard jpeg_row_encoder_finish(encoder, &output, &size, &message) == 0, let output else { throw failure() }
        defer { free(output) }
        return try JPEGEncoder.withMarkers(Array(UnsafeBufferPointer(start: output, count: Int(size))),
                                           iccProfile: iccProfile, segments: segments)
    }
}
