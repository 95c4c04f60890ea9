import CHeif
import Foundation
import MetascrubCore

/// Decoding of the primary image of HEIF/AVIF files through libheif 1.15, for verification only (metascrub
/// never writes HEIF through libheif: it cannot drop an item without re-encoding).
///
/// Every call makes and frees its own `heif_context`, so calls are safe from any thread or task. libheif
/// reports errors as values (no longjmp, nothing printed).
public enum HEIFDecoder {
    /// Widest or tallest image a decode accepts (libheif's own limit is applied too).
    public static let maximumSide: Int32 = 1 << 15

    public struct RGBA: Sendable, Equatable {
        public var width: Int
        public var height: Int
        /// 8-bit RGBA, row-major without padding.
        public var pixels: [UInt8]
    }

    /// The primary image as 8-bit RGBA; `applyTransformations` applies `irot`, `imir` and `clap` as a viewer does.
    public static func decodePrimary(path: String, applyTransformations: Bool = true) throws -> RGBA {
        try decodePrimary(.path(path), applyTransformations: applyTransformations)
    }

    static func decodePrimary(_ input: Input, applyTransformations: Bool) throws -> RGBA {
        try withPrimaryImage(input, colorspace: heif_colorspace_RGB, chroma: heif_chroma_interleaved_RGBA,
                             applyTransformations: applyTransformations) { image, _ in
            var stride: Int32 = 0
            let width = Int(heif_image_get_width(image, heif_channel_interleaved))
            let height = Int(heif_image_get_height(image, heif_channel_interleaved))
            guard width > 0, height > 0, let plane = heif_image_get_plane_readonly(image, heif_channel_interleaved, &stride) else {
                throw NativeError.library(name: "libheif", message: "decoded image has no pixels")
            }
            var pixels = [UInt8](repeating: 0, count: width * height * 4)
            pixels.withUnsafeMutableBufferPointer { out in
                for y in 0..<height {
                    (out.baseAddress! + y * width * 4).update(from: plane + y * Int(stride), count: width * 4)
                }
            }
            return RGBA(width: width, height: height, pixels: pixels)
        }
    }

    public static func decodePrimary(bytes: [UInt8], applyTransformations: Bool = true) throws -> RGBA {
        try decodePrimary(.memory(bytes), applyTransformations: applyTransformations)
    }

    // MARK: - Plumbing

    enum Input {
        case path(String)
        case memory([UInt8])
    }

    /// Decodes the primary image and hands `body` the decoded image and its handle (both freed afterwards).
    static func withPrimaryImage<T>(
        _ input: Input, colorspace: heif_colorspace, chroma: heif_chroma, applyTransformations: Bool,
        _ body: (_ image: OpaquePointer, _ handle: OpaquePointer) throws -> T
    ) throws -> T {
        try withPrimaryHandle(input) { handle in
            try PixelBudget.check(width: Int(heif_image_handle_get_width(handle)), height: Int(heif_image_handle_get_height(handle)), "HEIF")
            let chroma = chroma == heif_chroma_interleaved_RGB && heif_image_handle_has_alpha_channel(handle) != 0
                ? heif_chroma_interleaved_RGBA : chroma
            guard let options = heif_decoding_options_alloc() else { throw NativeError.library(name: "libheif", message: "out of memory") }
            defer { heif_decoding_options_free(options) }
            options.pointee.ignore_transformations = applyTransformations ? 0 : 1
            var image: OpaquePointer?
            try check(heif_decode_image(handle, &image, colorspace, chroma, options))
            guard let image else { throw NativeError.library(name: "libheif", message: "decoding gave no image") }
            defer { heif_image_release(image) }
            return try body(image, handle)
        }
    }

    /// Reads the file and hands `body` the primary image's handle (freed afterwards, with the context).
    static func withPrimaryHandle<T>(_ input: Input, _ body: (_ handle: OpaquePointer) throws -> T) throws -> T {
        _ = registerThreadedHEVC
        guard let context = heif_context_alloc() else { throw NativeError.library(name: "libheif", message: "out of memory") }
        defer { heif_context_free(context) }
        heif_context_set_maximum_image_size_limit(context, maximumSide)
        switch input {
        case .path(let path):
            try check(heif_context_read_from_file(context, path, nil))
        case .memory(let bytes):
            // libheif copies the buffer, so it need not outlive this call.
            try check(bytes.withUnsafeBytes { heif_context_read_from_memory(context, $0.baseAddress, $0.count, nil) })
        }
        var handle: OpaquePointer?
        try check(heif_context_get_primary_image_handle(context, &handle))
        guard let handle else { throw NativeError.library(name: "libheif", message: "no primary image") }
        defer { heif_image_handle_release(handle) }
        return try body(handle)
    }

    /// libde265 with a worker thread per core instead of libheif's one (`hevc_decoder.c`): the same pixels, decoded
    /// in parallel where the stream allows it (wavefront-parallel or tiled HEVC). Registered once per process.
    static let registerThreadedHEVC: Void = {
        _ = metascrub_heif_use_threaded_hevc(Int32(ProcessInfo.processInfo.activeProcessorCount))
    }()

    /// Whether HEVC images decode through the threaded plugin (false when libde265 could not be loaded).
    public static var threadedHEVCInUse: Bool {
        _ = registerThreadedHEVC
        return metascrub_heif_use_threaded_hevc(1) != 0
    }

    static func check(_ error: heif_error) throws {
        guard error.code != heif_error_Ok else { return }
        let message = error.message.map { String(cString: $0) } ?? "error \(error.code.rawValue)"
        throw NativeError.library(name: "libheif", message: message)
    }
}
