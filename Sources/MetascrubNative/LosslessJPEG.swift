import MetascrubCore
import CTurboJPEG

/// Thrown by `LosslessJPEG.transform` when the image is not whole MCUs in the direction the transform needs,
/// so no perfect DCT-domain transform exists (partial edge blocks would have to be dropped or re-encoded).
public enum LosslessJPEGError: Error, Sendable, Equatable {
    case imperfect(width: Int, height: Int)
}

/// Lossless JPEG operations through libturbojpeg (TurboJPEG 2.1 API).
///
/// Every call makes and destroys its own TurboJPEG handle, so calls are safe from any thread or task.
/// libturbojpeg keeps its messages in the handle (nothing is printed).
public enum LosslessJPEG {
    public enum Transform: Sendable, Hashable, CaseIterable {
        case flipHorizontal, flipVertical, transpose, transverse, rotate90, rotate180, rotate270

        var op: Int32 {
            switch self {
            case .flipHorizontal: return Int32(TJXOP_HFLIP.rawValue)
            case .flipVertical: return Int32(TJXOP_VFLIP.rawValue)
            case .transpose: return Int32(TJXOP_TRANSPOSE.rawValue)
            case .transverse: return Int32(TJXOP_TRANSVERSE.rawValue)
            case .rotate90: return Int32(TJXOP_ROT90.rawValue)
            case .rotate180: return Int32(TJXOP_ROT180.rawValue)
            case .rotate270: return Int32(TJXOP_ROT270.rawValue)
            }
        }
    }

    /// What `header(_:)` reads from a JPEG; only it makes one, so the memberwise initialiser is enough.
    public struct Header: Sendable, Equatable {
        public var width: Int
        public var height: Int
        /// A TJSAMP_* value (TJSAMP_444 = 0, 422 = 1, 420 = 2, GRAY = 3, 440 = 4, 411 = 5).
        public var subsampling: Int32
        /// A TJCS_* value (TJCS_RGB = 0, YCbCr = 1, GRAY = 2, CMYK = 3, YCCK = 4).
        public var colorspace: Int32

        /// MCU width and height in pixels for this subsampling (0 when TurboJPEG does not know it).
        public var mcuSize: (width: Int, height: Int) {
            (Int(cturbojpeg_mcu_width(subsampling)), Int(cturbojpeg_mcu_height(subsampling)))
        }
    }


    public static func header(_ jpeg: [UInt8]) throws -> Header {
        let handle = try makeHandle(tjInitDecompress())
        defer { tjDestroy(handle) }
        var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colorspace: Int32 = 0
        let rc = jpeg.withUnsafeBufferPointer { buffer in
            tjDecompressHeader3(handle, buffer.baseAddress, UInt(buffer.count), &width, &height, &subsampling, &colorspace)
        }
        guard rc == 0 else { throw failure(handle) }
        // TurboJPEG 2.1 answers a tables-only (or hopelessly truncated) stream with success and 0x0.
        guard width > 0, height > 0 else {
            throw NativeError.library(name: "libturbojpeg", message: "no image in the JPEG data (tables only or truncated)")
        }
        return Header(width: Int(width), height: Int(height), subsampling: subsampling, colorspace: colorspace)
    }

    /// DCT-domain transform with TJXOPT_PERFECT | TJXOPT_COPYNONE: no pixel is re-encoded and no marker
    /// (APPn, COM) is copied. Throws `LosslessJPEGError.imperfect` when the size is not whole MCUs for that
    /// transform; other failures (including libjpeg warnings such as corrupt or truncated data, since
    /// TJFLAG_STOPONWARNING is set) throw `NativeError`.
    /// `tolerateWarnings` lets a deliberately truncated sample (see the JPEG bake decision) through.
    public static func transform(_ jpeg: [UInt8], _ t: Transform, tolerateWarnings: Bool = false) throws -> [UInt8] {
        // The transform holds every DCT coefficient of the image (2 bytes per sample): whole-image memory.
        let info = try header(jpeg)
        try PixelBudget.check(width: info.width, height: info.height, "JPEG")
        let handle = try makeHandle(tjInitTransform())
        defer { tjDestroy(handle) }
        var xform = tjtransform()
        xform.op = t.op
        xform.options = Int32(TJXOPT_PERFECT | TJXOPT_COPYNONE)
        var output: UnsafeMutablePointer<UInt8>? = nil
        var outputSize: UInt = 0
        defer { if let output { tjFree(output) } }
        let rc = jpeg.withUnsafeBufferPointer { buffer in
            tjTransform(handle, buffer.baseAddress, UInt(buffer.count), 1, &output, &outputSize, &xform,
                        tolerateWarnings ? 0 : Int32(TJFLAG_STOPONWARNING))
        }
        guard rc == 0 || tolerateWarnings && tjGetErrorCode(handle) == Int32(TJERR_WARNING.rawValue) else {
            let error = failure(handle)
            if case let .library(_, message) = error, message.contains("not perfect"),
               let header = try? header(jpeg) {
                throw LosslessJPEGError.imperfect(width: header.width, height: header.height)
            }
            throw error
        }
        guard let output, outputSize > 0 else {
            throw NativeError.library(name: "libturbojpeg", message: "tjTransform returned no image")
        }
        return Array(UnsafeBufferPointer(start: output, count: Int(outputSize)))
    }

    /// Decoded pixels, RGB 8-bit, row-major without padding, for verification (TJFLAG_ACCURATEDCT).
    /// CMYK/YCCK JPEGs cannot be decoded to RGB by TurboJPEG 2.1 and throw.
    public static func decodeRGB(_ jpeg: [UInt8], tolerateWarnings: Bool = false) throws -> (width: Int, height: Int, pixels: [UInt8]) {
        let info = try header(jpeg)
        try PixelBudget.check(width: info.width, height: info.height, "JPEG")
        let handle = try makeHandle(tjInitDecompress())
        defer { tjDestroy(handle) }
        var pixels = [UInt8](repeating: 0, count: info.width * info.height * 3)
        let rc = jpeg.withUnsafeBufferPointer { buffer in
            pixels.withUnsafeMutableBufferPointer { out in
                tjDecompress2(handle, buffer.baseAddress, UInt(buffer.count), out.baseAddress, Int32(info.width),
                              Int32(info.width * 3), Int32(info.height), Int32(TJPF_RGB.rawValue),
                              Int32(TJFLAG_ACCURATEDCT) | (tolerateWarnings ? 0 : Int32(TJFLAG_STOPONWARNING)))
            }
        }
        guard rc == 0 || tolerateWarnings && tjGetErrorCode(handle) == Int32(TJERR_WARNING.rawValue) else { throw failure(handle) }
        return (info.width, info.height, pixels)
    }

    // MARK: - Plumbing

    private static func makeHandle(_ handle: tjhandle?) throws -> tjhandle {
        guard let handle else {
            // A handle could not be made: the message is in the global (thread-local in 2.1) error string.
            throw NativeError.library(name: "libturbojpeg", message: message(nil))
        }
        return handle
    }

    private static func failure(_ handle: tjhandle) -> NativeError {
        NativeError.library(name: "libturbojpeg", message: message(handle))
    }

    private static func message(_ handle: tjhandle?) -> String {
        guard let cString = tjGetErrorStr2(handle) else { return "unknown error" }
        return String(cString: cString)
    }
}
