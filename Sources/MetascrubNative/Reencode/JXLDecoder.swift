// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import CJXLLoader

/// Decoding of JPEG XL through libjxl, for conversion: the first frame as a viewer shows it (libjxl applies
/// the orientation unless asked not to), 8-bit RGB or RGBA, with the ICC profile that describes those pixels.
/// Each call has its own decoder and thread runner, so calls are safe from any thread. libjxl is loaded with
/// dlopen on the first call (`CJXLLoader`), so runs that never convert JPEG XL do not pay for it at start-up.
public enum JXLDecoder {
    public static func render(bytes: [UInt8]) throws -> DecodedImage {
        guard let api = cjxl_load()?.pointee else {
            throw failure("libjxl 0.7 (Debian libjxl0.7) is not installed, so JPEG XL cannot be decoded")
        }
        guard let decoder = api.create(nil) else { throw failure("out of memory") }
        defer { api.destroy(decoder) }
        let runner = api.runner_create(nil)
        defer { if let runner { api.runner_destroy(runner) } }
        if let runner {
            guard api.set_parallel_runner(decoder, api.runner, runner) == JXL_DEC_SUCCESS else { throw failure("no thread runner") }
        }
        let events = Int32(JXL_DEC_BASIC_INFO.rawValue | JXL_DEC_COLOR_ENCODING.rawValue | JXL_DEC_FULL_IMAGE.rawValue)
        guard api.subscribe_events(decoder, events) == JXL_DEC_SUCCESS else { throw failure("cannot subscribe to events") }
        return try bytes.withUnsafeBufferPointer { input -> DecodedImage in
            guard api.set_input(decoder, input.baseAddress, input.count) == JXL_DEC_SUCCESS else { throw failure("cannot set input") }
            api.close_input(decoder)
            var info = JxlBasicInfo()
            var format = JxlPixelFormat(num_channels: 3, data_type: JXL_TYPE_UINT8, endianness: JXL_NATIVE_ENDIAN, align: 0)
            var pixels: [UInt8] = []
            var icc: [UInt8]?
            var haveImage = false
            while true {
                let status = api.process_input(decoder)
                switch status {
                case JXL_DEC_ERROR:
                    throw failure("the codestream is invalid")
                case JXL_DEC_NEED_MORE_INPUT:
                    throw failure("the file ends before the image does")
                case JXL_DEC_BASIC_INFO:
                    guard api.get_basic_info(decoder, &info) == JXL_DEC_SUCCESS else { throw failure("no basic info") }
                    try PixelBudget.check(width: Int(info.xsize), height: Int(info.ysize), "JPEG XL")
                    format.num_channels = info.alpha_bits > 0 ? 4 : 3
                    if let runner {
                        api.runner_set_threads(runner, Int(api.runner_suggest_threads(UInt64(info.xsize), UInt64(info.ysize))))
                    }
                case JXL_DEC_COLOR_ENCODING:
                    var size = 0
                    if api.get_icc_profile_size(decoder, nil, JXL_COLOR_PROFILE_TARGET_DATA, &size) == JXL_DEC_SUCCESS, size > 0, size < 64 << 20 {
                        var profile = [UInt8](repeating: 0, count: size)
                        if api.get_color_as_icc_profile(decoder, nil, JXL_COLOR_PROFILE_TARGET_DATA, &profile, size) == JXL_DEC_SUCCESS {
                            icc = profile
                        }
                    }
                case JXL_DEC_NEED_IMAGE_OUT_BUFFER:
                    var size = 0
                    guard api.image_out_buffer_size(decoder, &format, &size) == JXL_DEC_SUCCESS,
                          size == Int(info.xsize) * Int(info.ysize) * Int(format.num_channels) else {
                        throw failure("unexpected output buffer size")
                    }
                    pixels = [UInt8](repeating: 0, count: size)
                    let rc = pixels.withUnsafeMutableBytes { api.set_image_out_buffer(decoder, &format, $0.baseAddress, size) }
                    guard rc == JXL_DEC_SUCCESS else { throw failure("cannot set the output buffer") }
                case JXL_DEC_FULL_IMAGE:
                    // The first frame is the image (an animation's later frames are not converted).
                    haveImage = true
                case JXL_DEC_SUCCESS:
                    guard haveImage else { throw failure("no image in the file") }
                    return finish()
                default:
                    continue
                }
                if haveImage { return finish() }
            }

            func finish() -> DecodedImage {
                // Orientation 5–8 swaps the sides; libjxl has already turned the pixels.
                let swapped = info.orientation.rawValue >= 5
                let width = Int(swapped ? info.ysize : info.xsize), height = Int(swapped ? info.xsize : info.ysize)
                return DecodedImage(
                    raster: Raster(width: width, height: height, layout: format.num_channels == 4 ? .rgba : .rgb, pixels: pixels),
                    iccProfile: icc, chroma: nil, bitDepth: Int(info.bits_per_sample), decoder: "libjxl \(version(api))")
            }
        }
    }

    static func version(_ api: cjxl_api) -> String {
        let v = api.version()
        return "\(v / 1_000_000).\(v / 1000 % 1000).\(v % 1000)"
    }

    private static func failure(_ message: String) -> NativeError { .library(name: "libjxl", message: message) }
}
