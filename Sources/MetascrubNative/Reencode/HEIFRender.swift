// SPDX-License-Identifier: GPL-3.0-or-later
import CHeif

extension HEIFDecoder {
    /// The primary image as a viewer shows it (`irot`, `imir`, `clap` applied), for conversion: RGB, or RGBA
    /// when the image has an alpha plane, with the raw ICC profile. Gain maps, depth maps and thumbnails are
    /// other items and never part of this render.
    public static func render(path: String) throws -> DecodedImage {
        try render(.path(path))
    }

    public static func render(bytes: [UInt8]) throws -> DecodedImage {
        try render(.memory(bytes))
    }

    static func render(_ input: Input) throws -> DecodedImage {
        try withPrimaryImage(input, colorspace: heif_colorspace_RGB, chroma: heif_chroma_interleaved_RGB,
                             applyTransformations: true) { image, handle in
            let withAlpha = heif_image_get_chroma_format(image) == heif_chroma_interleaved_RGBA
            let layout: Raster.Layout = withAlpha ? .rgba : .rgb
            let width = Int(heif_image_get_width(image, heif_channel_interleaved))
            let height = Int(heif_image_get_height(image, heif_channel_interleaved))
            var stride: Int32 = 0
            guard width > 0, height > 0, let plane = heif_image_get_plane_readonly(image, heif_channel_interleaved, &stride) else {
                throw NativeError.library(name: "libheif", message: "decoded image has no pixels")
            }
            let row = width * layout.rawValue
            // Filled row by row straight from libheif's plane: no zeroing pass over 36 MB first.
            let pixels = [UInt8](unsafeUninitializedCapacity: row * height) { out, count in
                for y in 0..<height {
                    (out.baseAddress! + y * row).initialize(from: plane + y * Int(stride), count: row)
                }
                count = row * height
            }
            return DecodedImage(
                raster: Raster(width: width, height: height, layout: layout, pixels: pixels),
                iccProfile: try iccProfile(handle), chroma: nil,
                bitDepth: Int(heif_image_handle_get_luma_bits_per_pixel(handle)),
                decoder: "libheif " + String(cString: heif_get_version()))
        }
    }

    /// The `colr` ICC profile (`prof` or `rICC`); nil when the image has none (only `nclx`, or nothing).
    static func iccProfile(_ handle: OpaquePointer) throws -> [UInt8]? {
        let type = heif_image_handle_get_color_profile_type(handle)
        guard type == heif_color_profile_type_prof || type == heif_color_profile_type_rICC else { return nil }
        let size = heif_image_handle_get_raw_color_profile_size(handle)
        guard size > 0, size < 64 << 20 else { return nil }
        var profile = [UInt8](repeating: 0, count: size)
        try check(profile.withUnsafeMutableBytes { heif_image_handle_get_raw_color_profile(handle, $0.baseAddress) })
        return profile
    }
}
