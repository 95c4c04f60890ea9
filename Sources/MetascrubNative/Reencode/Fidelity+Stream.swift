// SPDX-License-Identifier: GPL-3.0-or-later
import CJPEGStream
import Foundation

extension Fidelity {
    /// The same figure as `measure(_:_:)` (PSNR over R, G, B; SSIM of BT.601 luma over 8×8 windows) between a
    /// render and a JPEG, with the JPEG decoded eight rows at a time as any viewer decodes it (libjpeg: accurate
    /// IDCT, fancy upsampling, the decoder `tjDecompress2` runs): nothing beyond the render is held but one band.
    static func measure(_ render: RGBPlanes, jpeg: [UInt8]) throws -> Fidelity {
        var message = [CChar](repeating: 0, count: 200)
        return try jpeg.withUnsafeBufferPointer { bytes in
            guard let stream = jpeg_stream_open(bytes.baseAddress, bytes.count, &message) else {
                throw NativeError.library(name: "libjpeg", message: String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
            }
            defer { jpeg_stream_close(stream) }
            let width = Int(jpeg_stream_width(stream)), height = Int(jpeg_stream_height(stream))
            guard width == render.width, height == render.height else {
                throw NativeError.library(name: "metascrub", message:
                    "re-encoded image is \(width)×\(height), the source shows \(render.width)×\(render.height)")
            }
            var band = [UInt8](repeating: 0, count: width * 3 * 8)
            var squared: UInt64 = 0, maximum = 0, ssimSum = 0.0, windows = 0
            var top = 0
            while top < height {
                let rows = band.withUnsafeMutableBufferPointer { jpeg_stream_read(stream, $0.baseAddress, 8, &message) }
                guard rows > 0 else {
                    throw NativeError.library(name: "libjpeg", message: rows < 0 ? String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "the JPEG ends at row \(top) of \(height)")
                }
                band.withUnsafeBufferPointer { b in
                    for row in 0..<Int(rows) {
                        let o = b.baseAddress! + row * width * 3
                        for c in 0..<3 {
                            let p = render.planes[c] + (top + row) * render.strides[c]
                            for x in 0..<width {
                                let d = Int(p[x]) - Int(o[x * 3 + c])
                                squared &+= UInt64(d * d)
                                if d > maximum || -d > maximum { maximum = abs(d) }
                            }
                        }
                    }
                    if rows == 8 {
                        let (sum, count) = bandSSIM(render, top: top, b.baseAddress!)
                        ssimSum += sum
                        windows += count
                    }
                }
                top += Int(rows)
            }
            guard squared > 0 else { return Fidelity(psnr: nil, ssim: 1, maximumDifference: 0) }
            let mse = Double(squared) / Double(width * height * 3)
            return Fidelity(psnr: 10 * log10(255 * 255 / mse), ssim: windows == 0 ? 0 : ssimSum / Double(windows),
                            maximumDifference: maximum)
        }
    }

    /// `ssimRow` for one band of eight rows: the render's rows from `top` against the decoded band.
    private static func bandSSIM(_ render: RGBPlanes, top: Int, _ band: UnsafePointer<UInt8>) -> (Double, Int) {
        let w = render.width, n = 8
        var total = 0.0, windows = 0
        var x = 0
        while x + n <= w {
            var sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0
            for yy in 0..<n {
                let r = render.planes[0] + (top + yy) * render.strides[0]
                let g = render.planes[1] + (top + yy) * render.strides[1]
                let b = render.planes[2] + (top + yy) * render.strides[2]
                let o = band + yy * w * 3
                for xx in x..<(x + n) {
                    let la = (77 * Int(r[xx]) + 150 * Int(g[xx]) + 29 * Int(b[xx]) + 128) >> 8
                    let lb = (77 * Int(o[xx * 3]) + 150 * Int(o[xx * 3 + 1]) + 29 * Int(o[xx * 3 + 2]) + 128) >> 8
                    sa += la; sb += lb; saa += la * la; sbb += lb * lb; sab += la * lb
                }
            }
            total += Fidelity.ssimWindow(sa: sa, sb: sb, saa: saa, sbb: sbb, sab: sab, count: n * n)
            windows += 1
            x += n
        }
        return (total, windows)
    }
}
