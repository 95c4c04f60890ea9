/// A failure reported by one of the C/C++ libraries behind `MetascrubNative`.
///
/// Messages come from the libraries' own error strings (libturbojpeg, libpng) or from the exiv2 bridge, which
/// reports exiv2's error *code* only (exiv2's message text can quote metadata values).
public enum NativeError: Error, Sendable, CustomStringConvertible {
    case library(name: String, message: String)

    public var description: String {
        switch self {
        case let .library(name, message): return "\(name): \(message)"
        }
    }
}
