// SPDX-License-Identifier: GPL-3.0-or-later
import CNettle
import MetascrubCore
import MetascrubFormats

#if canImport(Glibc)
import Glibc
#endif

enum Hashing {
    /// SHA-256 of a whole source, by Nettle (SHA extensions where the CPU has them). Files are read straight from
    /// the descriptor into one reused buffer: the pure-Swift digest plus a fresh array per block cost more than
    /// the rest of cleaning a large video (profile in docs/benchmarks.md).
    static func sha256(_ source: any ByteSource) throws -> String {
        var ctx = sha256_ctx()
        nettle_sha256_init(&ctx)
        let block = 1 << 20
        var offset: Int64 = 0
        if let fd = source.fileDescriptor {
            var buffer = [UInt8](repeating: 0, count: block)
            while offset < source.size {
                let want = Int(min(source.size - offset, Int64(block)))
                let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, want, off_t(offset)) }
                guard n > 0 else {
                    let path = (source as? FileByteSource)?.path ?? "input"
                    throw MetascrubError.io(operation: "read", path: path, errno: n == 0 ? EIO : errno)
                }
                buffer.withUnsafeBytes { nettle_sha256_update(&ctx, n, $0.baseAddress?.assumingMemoryBound(to: UInt8.self)) }
                offset += Int64(n)
            }
        } else {
            while offset < source.size {
                let n = Int(min(source.size - offset, Int64(block)))
                try source.read(at: offset, count: n).withUnsafeBytes {
                    nettle_sha256_update(&ctx, n, $0.baseAddress?.assumingMemoryBound(to: UInt8.self))
                }
                offset += Int64(n)
            }
        }
        var digest = [UInt8](repeating: 0, count: 32)
        digest.withUnsafeMutableBufferPointer { nettle_sha256_digest(&ctx, 32, $0.baseAddress) }
        return SHA256.hexString(digest)
    }
}
