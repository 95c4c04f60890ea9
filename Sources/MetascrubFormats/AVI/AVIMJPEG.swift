// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// Motion-JPEG from still cameras carries an APP1 EXIF block (maker note, serial number, sometimes GPS) in every
/// frame. Each kind of segment becomes one item per stream with a count and its first frame; cleaning zeroes the
/// segment's payload in place (an APPn or COM of zeros that every decoder skips), so no chunk or index moves.
/// APP0 (JFIF/AVI1 field information) and APP2 (ICC) are rendering and stay.
extension AVIFormat.Scanner {
    static let mjpegHandlers: Set<String> = ["MJPG", "mjpg", "AVRn", "dmb1", "JPEG", "jpeg", "AVDJ"]
    /// How much of a frame is read to find its segments (they precede the scan; an APPn is at most 64 KB).
    static let jpegWindow = 1 << 17

    /// The APP1 (EXIF, XMP) and COM segments before the first scan of one frame.
    mutating func frameSegments(at offset: Int64, size: Int64, stream: Int, frame: Int) throws {
        let bytes = try input.read(at: offset, count: Int(min(size, Int64(Self.jpegWindow))), format: AVIFormat.format, path: "movi frame")
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return }
        let location = "stream \(stream) frame \(frame)"
        // Moved out and back rather than copied: a copy would duplicate the whole tally on every frame.
        var tally = SampleSEI.Tally()
        swap(&tally, &seiTally)
        defer { swap(&tally, &seiTally) }
        var i = 2
        while i + 4 <= bytes.count, bytes[i] == 0xFF {
            let marker = bytes[i + 1]
            if marker == 0xFF { i += 1; continue }
            if marker == 0xDA || marker == 0xD9 { break }
            let length = Int(bytes[i + 2]) << 8 | Int(bytes[i + 3])
            guard length >= 2, i + 2 + length <= bytes.count else { break }
            let payload = bytes[(i + 4)..<(i + 2 + length)]
            let kind: (key: String, category: Category, what: String)?
            if payload.allSatisfy({ $0 == 0 }) {
                kind = nil  // already blanked
            } else if marker == 0xE1, payload.starts(with: Array("Exif".utf8)) {
                kind = ("avi:mjpeg/exif", .location, "EXIF block in a Motion-JPEG frame (camera, serial numbers, maker note, GPS)")
            } else if marker == 0xE1 {
                kind = ("avi:mjpeg/xmp", .content, "XMP or other APP1 data in a Motion-JPEG frame")
            } else if marker == 0xFE {
                kind = ("avi:mjpeg/comment", .content, "JPEG comment in a Motion-JPEG frame")
            } else {
                kind = nil
            }
            if let kind {
                let range = (offset + Int64(i + 4))..<(offset + Int64(i + 2 + length))
                let text = String(decoding: payload.prefix(24).filter { (0x20...0x7E).contains($0) }, as: UTF8.self)
                let message = SampleSEI.Message(range: range, filler: [UInt8](repeating: 0, count: range.count), key: kind.key,
                                                category: kind.category, what: kind.what, text: text, uuid: "")
                tally.record(message, track: "\(stream)", location: location) {
                    add(kind.key, kind.category, range, location: "RIFF/LIST-movi/\(String(format: "%02d", stream))dc/APP", detail: kind.what,
                        value: text, action: .patch([]))
                }
            }
            i += 2 + length
        }
    }
}
