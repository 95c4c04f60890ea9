import CExiv2Bridge
import CFFmpeg
import CHeif
import CPNG

/// Versions of the C/C++ libraries linked in; calling it proves every module map links.
public enum NativeLibraries {
    /// Library name -> runtime version. libexif and libturbojpeg have no runtime version API and are absent.
    /// Keys: "exiv2", "libpng", "libheif", "libavformat", "libavcodec", "libavutil", "ffmpeg".
    public static func versions() -> [String: String] {
        var versions: [String: String] = [:]
        versions["exiv2"] = Exiv2.version()
        let png = png_access_version_number()  // e.g. 10639 -> 1.6.39
        versions["libpng"] = "\(png / 10000).\(png / 100 % 100).\(png % 100)"
        if let heif = heif_get_version() { versions["libheif"] = String(cString: heif) }
        versions["libavformat"] = libav(avformat_version())
        versions["libavcodec"] = libav(avcodec_version())
        versions["libavutil"] = libav(avutil_version())
        if let ffmpeg = av_version_info() { versions["ffmpeg"] = String(cString: ffmpeg) }
        return versions
    }

    private static func libav(_ v: UInt32) -> String {
        "\(cffmpeg_version_major(v)).\(cffmpeg_version_minor(v)).\(cffmpeg_version_micro(v))"
    }
}
