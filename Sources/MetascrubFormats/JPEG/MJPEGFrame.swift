// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// A Motion-JPEG frame (an AVI `##dc` chunk, an MP4/MOV sample, a Matroska block) is a whole JPEG, and muxing camera
/// photos with `-c copy` (a timelapse) keeps each photo's APPn and COM segments in every frame: EXIF with GPS and the
/// owner's name, XMP, IPTC. Each such segment is a message whose removal overwrites its payload in place with zeros
/// (an APPn or COM of zeros, which every decoder skips), so no sample, chunk or index moves; `SampleSEI.Tally` makes
/// one item per kind and stream of them, as for H.264 SEI. APP0 (JFIF, AVI1 field information), ICC profiles and
/// Adobe's colour transform are what a decoder renders with and stay.
enum MJPEGFrame {
    /// Frames are walked segment by segment up to the first scan; a frame with more segments than this before
    /// its scan is not a camera's.
    static let maxSegments = 256
    static let jfifFields = 14

    /// The removable segments before the first scan of the frame at `offset`. `container` prefixes the item keys
    /// (`avi:mjpeg/exif`); a frame that does not start with SOI yields nothing.
    static func messages(_ source: any ByteSource, at offset: Int64, size: Int64, container: String, format: String,
                         path: @autoclosure () -> String) throws -> [SampleSEI.Message] {
        let end = offset + size
        guard size >= 4, try source.read(at: offset, count: 2, format: format, path: path()) == [0xFF, 0xD8] else { return [] }
        var out: [SampleSEI.Message] = []
        var at = offset + 2
        for _ in 0..<maxSegments {
            guard at + 4 <= end else { break }
            let head = try source.read(at: at, count: 4, format: format, path: path())
            guard head[0] == 0xFF else { break }
            let marker = head[1]
            if marker == 0xFF { at += 1; continue }
            if marker == 0xDA || marker == 0xD9 { break }
            let length = Int64(head[2]) << 8 | Int64(head[3])
            guard length >= 2, at + 2 + length <= end else { break }
            let range = (at + 4)..<(at + 2 + length)
            if marker == 0xFE || (0xE0...0xEF).contains(marker) {
                let payload = try source.read(at: range.lowerBound, count: range.count, format: format, path: path() + " APP")
                if let kind = kind(marker: marker, payload: payload, container: container) {
                    let text = String(decoding: payload.dropFirst(kind.kept).prefix(24).filter { (0x20...0x7E).contains($0) }, as: UTF8.self)
                    let range = (range.lowerBound + Int64(kind.kept))..<range.upperBound
                    out.append(SampleSEI.Message(range: range, filler: [UInt8](repeating: 0, count: range.count), key: kind.key,
                                                 category: kind.category, what: kind.what, text: text, uuid: "",
                                                 unknown: kind.unknown))
                }
            }
            at += 2 + length
        }
        return out
    }

    /// What a segment is, or nil when it stays (rendering, JFIF fields, already blanked); `kept` leading payload bytes
    /// are fields that stay.
    static func kind(marker: UInt8, payload: [UInt8], container: String)
        -> (key: String, category: Category, what: String, unknown: Bool, kept: Int)? {
        func starts(_ s: String) -> Bool { payload.starts(with: Array(s.utf8)) }
        if payload.allSatisfy({ $0 == 0 }) { return nil }
        let prefix = "\(container):mjpeg"
        switch marker {
        case 0xE0 where starts("JFIF\0"):
            // Identifier, version, density and thumbnail size: 14 bytes. What follows is a thumbnail or slack.
            guard payload.dropFirst(jfifFields).contains(where: { $0 != 0 }) else { return nil }
            return ("\(prefix)/jfif-thumbnail", .embedded, "JFIF thumbnail or bytes after the JFIF fields in a Motion-JPEG frame",
                    false, jfifFields)
        case 0xE0 where starts("AVI1"):
            return nil
        case 0xE1 where starts("Exif"):
            return ("\(prefix)/exif", .location, "EXIF block in a Motion-JPEG frame (camera, serial numbers, owner, GPS)", false, 0)
        case 0xE1:
            // XMP from a photo editor can hold a position as well as a creator; it goes with location.
            return ("\(prefix)/xmp", .location, "XMP or other APP1 data in a Motion-JPEG frame", false, 0)
        case 0xE2 where starts("ICC_PROFILE\0"):
            return nil
        case 0xE2 where starts("MPF\0"):
            return ("\(prefix)/mpf", .embedded, "multi-picture index in a Motion-JPEG frame", false, 0)
        case 0xED:
            return ("\(prefix)/iptc", .location, "Photoshop/IPTC block in a Motion-JPEG frame (names, places)", false, 0)
        case 0xEE where starts("Adobe"):
            return nil
        case 0xFE where !LocationShapes.find(in: payload).isEmpty:
            return ("\(prefix)/comment-position", .location, "JPEG comment stating a position in a Motion-JPEG frame", false, 0)
        case 0xFE:
            return ("\(prefix)/comment", .content, "JPEG comment in a Motion-JPEG frame", false, 0)
        default:
            return ("\(prefix)/app\(marker - 0xE0)", .content, "APP\(marker - 0xE0) segment in a Motion-JPEG frame", true, 0)
        }
    }
}
