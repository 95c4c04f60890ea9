// SPDX-License-Identifier: GPL-3.0-or-later
import CHeif

/// A HEIF/AVIF image's displayed render as libheif made it, 8-bit R, G and B planes read in place from
/// libheif's buffer (no copy) and released with it. libheif 1.15 converts every coded image to planar RGB
/// before it turns, mirrors and crops it, so asking for planes costs no conversion beyond the one it always
/// does, where interleaved RGB costs another pass and a second 36 MB buffer on a 12 MP photo. The samples are
/// the ones `heif-convert` writes (checked against it in the tests).
public final class RGBPlanes {
    private let image: OpaquePointer
    let width: Int
    let height: Int
    /// R, G, B.
    let planes: [UnsafePointer<UInt8>]
    let strides: [Int]
    /// The `colr` ICC profile, if the file has one.
    public let iccProfile: [UInt8]?
    /// "libheif 1.15.1".
    public let decoder: String

    /// Takes ownership of `image` (released in deinit, also when this init fails).
    init?(owning image: OpaquePointer, iccProfile: [UInt8]?, decoder: String) {
        self.image = image
        width = Int(heif_image_get_width(image, heif_channel_R))
        height = Int(heif_image_get_height(image, heif_channel_R))
        var planes: [UnsafePointer<UInt8>] = []
        var strides: [Int] = []
        for channel in [heif_channel_R, heif_channel_G, heif_channel_B] {
            var stride: Int32 = 0
            guard heif_image_get_bits_per_pixel_range(image, channel) == 8,
                  Int(heif_image_get_width(image, channel)) == width, Int(heif_image_get_height(image, channel)) == height,
                  let plane = heif_image_get_plane_readonly(image, channel, &stride) else { break }
            planes.append(plane)
            strides.append(Int(stride))
        }
        self.planes = planes
        self.strides = strides
        self.iccProfile = iccProfile
        self.decoder = decoder
        guard width > 0, height > 0, planes.count == 3,
              heif_image_get_colorspace(image) == heif_colorspace_RGB,
              heif_image_get_chroma_format(image) == heif_chroma_444
        else { return nil }
    }

    deinit { heif_image_release(image) }
}

extension HEIFDecoder {
    /// The primary image as a viewer shows it (`irot`, `imir`, `clap` applied) in planes, for an 8-bit image
    /// without alpha; nil otherwise (the caller decodes to interleaved RGB as before: libheif 1.15 keeps 10 bits
    /// in planes even when asked for 8).
    public static func renderPlanes(bytes: [UInt8]) throws -> RGBPlanes? {
        var render: RGBPlanes?
        try withPrimaryHandle(.memory(bytes)) { handle in
            guard heif_image_handle_has_alpha_channel(handle) == 0,
                  heif_image_handle_get_luma_bits_per_pixel(handle) == 8 else { return }
            var image: OpaquePointer?
            try check(heif_decode_image(handle, &image, heif_colorspace_RGB, heif_chroma_444, nil))
            guard let image else { throw NativeError.library(name: "libheif", message: "decoding gave no image") }
            render = RGBPlanes(owning: image, iccProfile: try iccProfile(handle),
                               decoder: "libheif " + String(cString: heif_get_version()))
        }
        return render
    }
}
