// SPDX-License-Identifier: GPL-3.0-or-later
import CHeif

/// A decoded image as 8-bit Y, Cb and Cr planes at 4:2:0, read in place from libheif's buffers (no copy) and
/// released with them. For a JPEG conversion these are exactly what the JPEG encoder wants: no RGB conversion,
/// no chroma resampling, no 36 MB interleaved copy of a 12 MP photo.
///
/// Only built where the planes are the samples libheif itself converts for display (`HEIFDecoder.renderYCbCr`):
/// then comparing planes is comparing the displayed images (see `Fidelity.measure(planes:)`).
final class YCbCrImage {
    private let image: OpaquePointer
    let width: Int
    let height: Int
    /// Y, Cb, Cr.
    let planes: [UnsafePointer<UInt8>]
    let strides: [Int]
    let iccProfile: [UInt8]?
    let decoder: String

    var chromaWidth: Int { (width + 1) / 2 }
    var chromaHeight: Int { (height + 1) / 2 }

    /// Takes ownership of `image` (released in deinit, also when this init fails).
    init?(owning image: OpaquePointer, iccProfile: [UInt8]?, decoder: String) {
        self.image = image
        width = Int(heif_image_get_width(image, heif_channel_Y))
        height = Int(heif_image_get_height(image, heif_channel_Y))
        var planes: [UnsafePointer<UInt8>] = []
        var strides: [Int] = []
        for channel in [heif_channel_Y, heif_channel_Cb, heif_channel_Cr] {
            var stride: Int32 = 0
            guard let plane = heif_image_get_plane_readonly(image, channel, &stride) else { break }
            planes.append(plane)
            strides.append(Int(stride))
        }
        self.planes = planes
        self.strides = strides
        self.iccProfile = iccProfile
        self.decoder = decoder
        guard width > 0, height > 0, planes.count == 3,
              heif_image_get_colorspace(image) == heif_colorspace_YCbCr,
              heif_image_get_chroma_format(image) == heif_chroma_420,
              heif_image_get_bits_per_pixel_range(image, heif_channel_Y) == 8,
              Int(heif_image_get_width(image, heif_channel_Cb)) == chromaWidth,
              Int(heif_image_get_height(image, heif_channel_Cb)) == chromaHeight,
              Int(heif_image_get_width(image, heif_channel_Cr)) == chromaWidth,
              Int(heif_image_get_height(image, heif_channel_Cr)) == chromaHeight
        else { return nil }
    }

    deinit { heif_image_release(image) }
}

extension HEIFDecoder {
    /// The primary image's 4:2:0 planes, with `irot`/`imir` applied, when they are what a viewer converts to
    /// RGB with the JPEG (JFIF) conversion: every coded image is 8-bit HEVC 4:2:0, nothing is cropped
    /// (`clap`), no alpha plane, and the colour description is BT.601 full range (libheif's default without an
    /// `nclx`, or an `nclx` saying matrix 5/6 and full range). A turned image must have even sides, so its chroma
    /// grid turns with it. Nil otherwise: the caller decodes to RGB as before.
    static func renderYCbCr(bytes: [UInt8]) throws -> YCbCrImage? {
        guard let traits = HEIFCodingTraits.read(bytes), traits.allHEVC420At8Bits else { return nil }
        var planes: YCbCrImage?
        try withPrimaryHandle(.memory(bytes)) { handle in
            guard heif_image_handle_has_alpha_channel(handle) == 0, try isBT601FullRange(handle) else { return }
            guard let options = heif_decoding_options_alloc() else { throw NativeError.library(name: "libheif", message: "out of memory") }
            defer { heif_decoding_options_free(options) }
            var image: OpaquePointer?
            try check(heif_decode_image(handle, &image, heif_colorspace_YCbCr, heif_chroma_420, options))
            guard let image else { throw NativeError.library(name: "libheif", message: "decoding gave no image") }
            let decoded = YCbCrImage(owning: image, iccProfile: try iccProfile(handle),
                                     decoder: "libheif " + String(cString: heif_get_version()))
            guard let decoded, !traits.hasRotationOrMirror || (decoded.width % 2 == 0 && decoded.height % 2 == 0) else { return }
            planes = decoded
        }
        return planes
    }

    private static func isBT601FullRange(_ handle: OpaquePointer) throws -> Bool {
        var nclx: UnsafeMutablePointer<heif_color_profile_nclx>?
        let error = heif_image_handle_get_nclx_color_profile(handle, &nclx)
        guard error.code == heif_error_Ok, let nclx else {
            // No nclx box: libheif converts with BT.601 full range, its default.
            return error.code == heif_error_Color_profile_does_not_exist
        }
        defer { heif_nclx_color_profile_free(nclx) }
        let matrix = nclx.pointee.matrix_coefficients.rawValue
        return (matrix == 5 || matrix == 6) && nclx.pointee.full_range_flag != 0
    }
}
