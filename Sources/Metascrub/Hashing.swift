// SPDX-License-Identifier: GPL-3.0-or-later
import CPlatform
import MetascrubCore
import MetascrubFormats

#if canImport(Glibc)
import Glibc
#endif

enum Hashing {
    /// SHA-256 of a whole source. Files are hashed in C (SHA-NI where the CPU has it) straight from the
    /// descriptor into one reused buffer: the pure-Swift digest plus a fresh 4 MiB array per block cost
    /// more than the rest of cleaning a large video (profile in docs/benchmarks.md).
    static func sha256(_ source: any ByteSource) throws -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        if let fd = source.fileDescriptor {
            let status = digest.withUnsafeMutableBufferPointer { ms_sha256_fd(fd, 0, source.size, $0.baseAddress!) }
            if status != 0 {
                let path = (source as? FileByteSource)?.path ?? "input"
                throw MetascrubError.io(operation: "read", path: path, errno: errno)
            }
            return SHA256.hexString(digest)
        }
        var ctx = ms_sha256_ctx()
        ms_sha256_init(&ctx)
        var offset: Int64 = 0
        while offset < source.size {
            let n = Int(min(source.size - offset, 1 << 22))
            try source.read(at: offset, count: n).withUnsafeBytes { ms_sha256_update(&ctx, $0.baseAddress, $0.count) }
            offset += Int64(n)
        }
        digest.withUnsafeMutableBufferPointer { ms_sha256_final(&ctx, $0.baseAddress!) }
        return SHA256.hexString(digest)
    }
}
