// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubFormats

enum Hashing {
    /// SHA-256 of a whole source, read in large blocks.
    static func sha256(_ source: any ByteSource) throws -> String {
        var hasher = SHA256()
        var offset: Int64 = 0
        while offset < source.size {
            let n = Int(min(source.size - offset, 1 << 22))
            hasher.update(try source.read(at: offset, count: n))
            offset += Int64(n)
        }
        return SHA256.hexString(hasher.finalize())
    }
}
