// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import XCTest

/// Decoded audio/video as ffmpeg sees it: per-frame MD5 digests of every decoded video (not attached-picture)
/// and audio frame, the independent proof that a container clean left the coded streams alone.
enum VideoOracle {
    /// `ffmpeg -map 0:V? -map 0:a? -f framemd5`: one "stream,pts,hash" line per decoded frame; nil when ffmpeg
    /// decodes nothing.
    static func frames(_ path: String) -> [String]? {
        let r = Tool.run(["ffmpeg", "-nostdin", "-v", "error", "-i", path, "-map", "0:V?", "-map", "0:a?", "-f", "framemd5", "-"])
        let lines = String(decoding: r.stdout, as: UTF8.self).split(separator: "\n")
            .filter { !$0.hasPrefix("#") }
            .map { line -> String in
                let f = line.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                return f.count >= 6 ? "\(f[0]),\(f[2]),\(f[5])" : String(line)
            }
        return lines.isEmpty ? nil : lines
    }

    /// ExifTool tags (with -ee) whose values still say something: not empty, not NUL padding, not a zero date,
    /// and not on the structural list.
    static func residual(_ path: String, allowed: Set<String> = []) -> [String] {
        let r = Tool.run(["exiftool", "-j", "-a", "-G1", "-n", "-ee", path])
        guard let array = try? JSONSerialization.jsonObject(with: r.stdout) as? [[String: Any]], let tags = array.first else { return ["exiftool failed"] }
        return tags.compactMap { key, value -> String? in
            let parts = key.split(separator: ":")
            guard parts.count == 2 else { return nil }
            let group = String(parts[0]), tag = String(parts[1])
            if ["System", "File", "ExifTool", "Composite"].contains(group) || structural.contains(tag) || allowed.contains(tag) { return nil }
            if let s = value as? String {
                let trimmed = s.trimmingCharacters(in: CharacterSet(charactersIn: "\u{0} "))
                if trimmed.isEmpty || trimmed.hasPrefix("0000:00:00") || trimmed.hasPrefix("1970:01:01 00:00:00") { return nil }
            }
            return key
        }.sorted()
    }

    static let structural: Set<String> = [
        "AudioBitsPerSample", "AudioChannels", "AudioCodec", "AudioCodecID", "AudioSampleCount", "AudioSampleRate", "AudioStreamType",
        "AvgBytesPerSec", "BitsPerSample", "CodecID", "DataPackets", "DocType", "DocTypeReadVersion", "DocTypeVersion", "Duration",
        "EBMLReadVersion", "EBMLVersion", "Encoding", "ErrorCorrectionType", "FileID", "FileLength", "Flags", "FrameCount", "FrameRate",
        "ImageHeight", "ImageWidth", "MaxBitrate", "MaxDataRate", "MaxPacketSize", "MinPacketSize", "NumChannels", "Preroll", "Quality",
        "SampleRate", "SampleSize", "SendDuration", "StreamCount", "StreamNumber", "StreamType", "TimeOffset", "TimecodeScale",
        "TrackDefault", "TrackLanguage", "TrackNumber", "TrackType", "TrackUID", "VideoCodec", "VideoFrameCount", "VideoFrameRate",
        "VideoScanType", "VideoStreamType", "SurroundMode", "AudioBitrate", "DisplayWidth", "DisplayHeight", "VideoCodecID",
        "DefaultDuration", "TrackUsed", "TrackForced", "CodecDecodeAll", "AspectRatioX", "AspectRatioY", "PixelWidth", "PixelHeight",
    ]
}
