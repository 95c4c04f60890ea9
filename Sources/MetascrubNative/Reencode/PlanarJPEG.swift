// SPDX-License-Identifier: GPL-3.0-or-later
import CJPEGStream
import Foundation

/// HEIC/AVIF → JPEG with memory bounded by one decoded image (issue 16's performance target). libheif's render
/// stays in libheif's planar buffer; libjpeg encodes it sixteen rows at a time (`jpeg_row_encoder`, TurboJPEG's
/// settings) and the check decodes the JPEG eight rows at a time (`jpeg_stream`) against it. Against the
/// interleaved path this saves libheif's interleaving pass and its second buffer, the copy into Swift, and the
/// whole decoded output the check used to hold.
enum PlanarJPEG {
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

extension RGBPlanes {
    /// The render as a JPEG at `settings` (libjpeg, sixteen rows at a time), with the ICC profile and `segments`
    /// inserted after the JFIF header, and how close its decode is to the render (`Fidelity.measure`, streamed).
    public func jpeg(_ settings: JPEGEncoder.Settings, iccProfile: [UInt8]?, segments: [[UInt8]]) throws -> (bytes: [UInt8], fidelity: Fidelity) {
        let bytes = try PlanarJPEG.encode(self, settings: settings, iccProfile: iccProfile, segments: segments)
        return (bytes, try Fidelity.measure(self, jpeg: bytes))
    }
}
