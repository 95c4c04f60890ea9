// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// The fields a WAV or AIFF structure chunk defines, read field by field: what a reader of the chunk reads is
/// kept, the bytes after it (slack, a sampler's private data) are not structure. `trimmed` returns the payload
/// with only those fields, or nil when the payload is exactly its fields (or is not one these rules know).
enum IFFChunkFields {
    static let ids: Set<String> = ["fmt ", "fact", "inst", "cue ", "plst", "smpl", "COMM", "FVER", "INST"]

    static func trimmed(_ id: String, _ p: [UInt8], order: ByteOrder, aifc: Bool) -> [UInt8]? {
        func u16(_ at: Int) -> Int { p.count >= at + 2 ? Int(order.u16(p, at)) : 0 }
        func u32(_ at: Int) -> Int { p.count >= at + 4 ? Int(order.u32(p, at)) : 0 }
        let length: Int
        switch id {
        case "fmt ":
            guard p.count >= 16 else { return nil }
            let tag = u16(0)
            if p.count >= 18, 18 + u16(16) <= p.count, ![1, 3, 6, 7].contains(tag) || u16(16) == 0 {
                length = 18 + u16(16)
            } else if [1, 3, 6, 7].contains(tag) {
                // PCM, float, A-law and mu-law define no extension: 16 bytes (18 with a zero cbSize).
                length = p.count >= 18 && u16(16) == 0 ? 18 : 16
            } else {
                return nil
            }
        case "fact": length = 4
        case "inst": length = 7
        case "cue ": length = 4 + 24 * u32(0)
        case "plst": length = 4 + 12 * u32(0)
        case "smpl":
            // A sampler's own data (cbSamplerData after the loops) is no field a reader of the samples needs.
            guard p.count >= 36 else { return nil }
            let fields = 36 + 24 * u32(28)
            guard fields <= p.count, fields < p.count || u32(32) != 0 else { return nil }
            var out = Array(p[0..<fields])
            out.replaceSubrange(32..<36, with: [0, 0, 0, 0])
            return out
        case "COMM":
            guard p.count >= 18 else { return nil }
            if aifc, p.count >= 23 {
                // AIFC: the compression type and its Pascal-string name (padded to an even length).
                let name = 1 + Int(p[22])
                length = 22 + name + (name & 1)
            } else {
                length = 18
            }
        case "FVER": length = 4
        case "INST": length = 20
        default: return nil
        }
        guard length < p.count else { return nil }
        return Array(p[0..<length])
    }
}
