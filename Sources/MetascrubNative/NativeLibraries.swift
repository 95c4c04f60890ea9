import CExiv2Bridge
import CHeif
import CPNG

/// Versions of the C/C++ libraries linked in; calling it proves every module map links.
///
/// FFmpeg is deliberately not linked: its codec libraries cost ~40 ms at every process start (measured:
/// a C program linking libavformat/libavcodec starts in 42 ms, one linking libheif in 8 ms), which breaks the
/// pre-commit budget. The audio/video formats must load it with dlopen on first use.
public enum NativeLibraries {
    /// Library name -> runtime version. libexif and libturbojpeg have no runtime version API and are absent.
    /// Keys: "exiv2", "libpng", "libheif".
    public static func versions() -> [String: String] {
        var versions: [String: String] = [:]
        versions["exiv2"] = Exiv2.version()
        let png = png_access_version_number()  // e.g. 10639 -> 1.6.39
        versions["libpng"] = "\(png / 10000).\(png / 100 % 100).\(png % 100)"
        if let heif = heif_get_version() { versions["libheif"] = String(cString: heif) }
        return versions
    }
}
