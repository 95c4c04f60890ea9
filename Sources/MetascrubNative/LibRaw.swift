// SPDX-License-Identifier: GPL-3.0-or-later
import CRawBridge

/// What LibRaw decodes from a camera raw: a digest of the unpacked sensor data and of the colour data a
/// converter uses (black and white levels, multipliers, matrices, CFA pattern, margins, identified camera).
public struct RawFingerprint: Sendable, Equatable {
    public var pixels: UInt64
    public var colour: UInt64
    public var width: Int
    public var height: Int
}

/// LibRaw (Debian libraw-dev, the thread-safe libraw_r), through the C bridge in `CRawBridge`. Each call uses
/// its own LibRaw instance, so calls from many tasks may run at once.
public enum LibRaw {
    /// Decodes the raw at `path` (a file LibRaw opens itself, so a large raw is not read into memory twice).
    public static func fingerprint(path: String) throws -> RawFingerprint {
        var out = rawbridge_fingerprint()
        let rc = path.withCString { rawbridge_fingerprint_file($0, &out) }
        return try result(rc, &out)
    }

    public static func fingerprint(bytes: [UInt8]) throws -> RawFingerprint {
        var out = rawbridge_fingerprint()
        let rc = bytes.withUnsafeBytes { rawbridge_fingerprint_buffer($0.baseAddress, $0.count, &out) }
        return try result(rc, &out)
    }

    /// Whether LibRaw recognises the raw at all (no decoding); the reason when it does not.
    public static func unrecognised(path: String) -> String? {
        var out = rawbridge_fingerprint()
        let rc = path.withCString { rawbridge_identify_file($0, &out) }
        return rc == 0 ? nil : message(&out)
    }

    public static func unrecognised(bytes: [UInt8]) -> String? {
        var out = rawbridge_fingerprint()
        let rc = bytes.withUnsafeBytes { rawbridge_identify_buffer($0.baseAddress, $0.count, &out) }
        return rc == 0 ? nil : message(&out)
    }

    private static func message(_ out: inout rawbridge_fingerprint) -> String {
        // The bridge prefixes "LibRaw: " for C callers; Swift callers name the library themselves.
        let text = withUnsafeBytes(of: &out.error) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        return text.hasPrefix("LibRaw: ") ? String(text.dropFirst(8)) : text
    }

    private static func result(_ rc: Int32, _ out: inout rawbridge_fingerprint) throws -> RawFingerprint {
        guard rc == 0 else {
            throw NativeError.library(name: "LibRaw", message: message(&out))
        }
        return RawFingerprint(pixels: out.pixels, colour: out.colour, width: Int(out.raw_width), height: Int(out.raw_height))
    }
}
