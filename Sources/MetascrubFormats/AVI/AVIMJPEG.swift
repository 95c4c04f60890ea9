// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// Motion-JPEG from still cameras carries an APP1 EXIF block (maker note, serial number, sometimes GPS) in every
/// frame. `MJPEGFrame` finds each frame's removable segments; each kind becomes one item per stream with a count
/// and its first frame, and cleaning zeroes the payloads in place, so no chunk or index moves.
extension AVIFormat.Scanner {
    static let mjpegHandlers: Set<String> = ["MJPG", "mjpg", "AVRn", "dmb1", "JPEG", "jpeg", "AVDJ"]

    /// The removable segments before the first scan of one frame.
    mutating func frameSegments(at offset: Int64, size: Int64, stream: Int, frame: Int) throws {
        let location = "stream \(stream) frame \(frame)"
        // Moved out and back rather than copied: a copy would duplicate the whole tally on every frame.
        var tally = SampleSEI.Tally()
        swap(&tally, &seiTally)
        defer { swap(&tally, &seiTally) }
        for message in try MJPEGFrame.messages(input, at: offset, size: size, container: "avi", format: AVIFormat.format, path: "movi frame") {
            tally.record(message, track: "\(stream)", location: location) {
                add(message.key, message.category, message.range, location: "RIFF/LIST-movi/\(String(format: "%02d", stream))dc/APP",
                    detail: message.what, value: message.text, unknown: message.unknown, action: .patch([]))
            }
        }
    }
}
