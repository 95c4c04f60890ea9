// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import MetascrubCore

/// Independent checks for audio files: what ExifTool still reports beyond stream structure, and the decoded
/// audio as ffmpeg sees it.
extension Oracle {
    /// ExifTool tags that describe the audio stream itself (as in shared/tools/oracle.py), plus the LAME
    /// fields kept for gapless playback and AIFF/RF64 layout tags.
    static let audioStructuralTags: Set<String> = [
        "MPEGAudioVersion", "AudioLayer", "AudioBitrate", "SampleRate", "ChannelMode", "MSStereo", "IntensityStereo",
        "CopyrightFlag", "OriginalMedia", "Emphasis", "VBRFrames", "VBRBytes", "VBRScale", "Encoder", "LameVBRQuality",
        "LameQuality", "LameMethod", "LameLowPassFilter", "LameBitrate", "LameStereoMode", "Encoding", "NumChannels",
        "AvgBytesPerSec", "BlockAlign", "BitsPerSample", "TotalSamples", "MD5Signature", "BlockSizeMin", "BlockSizeMax",
        "FrameSizeMin", "FrameSizeMax", "Channels", "VorbisVersion", "AudioChannels", "NominalBitrate", "MaximumBitrate",
        "MinimumBitrate", "OpusVersion", "OutputGain", "NumSampleFrames", "SampleSize", "CompressionType",
        "CompressorName", "FormatVersionTime", "RIFFSize64", "DataSize64", "NumberOfSamples64", "Duration",
    ]

    /// Non-structural, non-empty tags ExifTool still sees ("Group:Tag").
    static func audioResidual(_ path: String) -> [String] {
        let skip: Set<String> = ["ExifTool", "System", "File", "Composite", "SourceFile"]
        return exiftool(path).compactMap { key, value -> String? in
            let parts = key.split(separator: ":", maxSplits: 1).map(String.init)
            guard parts.count == 2, !skip.contains(parts[0]), !audioStructuralTags.contains(parts[1]) else { return nil }
            if let text = value as? String, text.trimmingCharacters(in: CharacterSet(charactersIn: "\0 ")).isEmpty { return nil }
            return key
        }.sorted()
    }

    /// SHA-256 of ffmpeg's per-packet MD5 list of the decoded audio streams (nil when nothing decodes).
    static func decodedAudio(_ path: String) -> String? {
        let r = Tool.run(["ffmpeg", "-v", "error", "-i", path, "-map", "0:a", "-f", "framemd5", "-"])
        let lines = String(decoding: r.stdout, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }
        guard r.status == 0, !lines.isEmpty else { return nil }
        return SHA256.hex(Array(lines.joined(separator: "\n").utf8))
    }
}
