// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// SEI NAL units stored in an HEVC decoder configuration record (`hvcC`, ISO/IEC 14496-15 8.3.3.1), the MP4
/// sample entry's box and Matroska's CodecPrivate. x265 and ffmpeg put x265's option string and build there when
/// the encoder writes global headers, so it never appears in a sample: the samples' SEI walk does not see it.
enum DecoderConfigSEI {
    /// The user-data messages of the record's SEI arrays (NAL types 39 and 40), at file offsets from `offset`
    /// (where the record's first byte is).
    static func messages(hvcC record: [UInt8], at offset: Int64) -> [SampleSEI.Message] {
        guard record.count > 23 else { return [] }
        var out: [SampleSEI.Message] = []
        var i = 23
        for _ in 0..<Int(record[22]) {
            guard i + 3 <= record.count else { break }
            let type = Int(record[i] & 0x3F)
            let count = Int(record[i + 1]) << 8 | Int(record[i + 2])
            i += 3
            for _ in 0..<count {
                guard i + 2 <= record.count else { return out }
                let length = Int(record[i]) << 8 | Int(record[i + 1])
                let start = i + 2
                guard start + length <= record.count else { return out }
                if type == 39 || type == 40, length > 2 {
                    out += SampleSEI.userData(nal: Array(record[start..<start + length]), nalStart: offset + Int64(start), hevc: true)
                }
                i = start + length
            }
        }
        return out
    }
}
