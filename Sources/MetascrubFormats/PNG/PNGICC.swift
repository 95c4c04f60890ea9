// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubNative

extension PNGScanner {
    /// The text tags of an iCCP profile, read from the inflated profile (name, NUL, method byte, zlib stream).
    /// A stream that does not inflate leaves the profile one block, kept or removed whole as before.
    static func iccText(_ source: any ByteSource, _ chunk: PNGStructure.Chunk, nameLength: Int, profileItem: Int,
                        location: String, into found: inout ItemCollector) throws -> ICCTextEdit? {
        guard chunk.length <= parseLimit, Int(chunk.length) > nameLength + 2 else { return nil }
        let data = try source.read(at: chunk.dataOffset, count: Int(chunk.length))
        let stream = Array(data[(nameLength + 2)...])
        guard let profile = try? Zlib.inflate(stream, limit: Int(parseLimit)) else { return nil }
        return ICCTextEdit(profile, parent: profileItem, location: "\(location)/ICC", into: &found)
    }
}
