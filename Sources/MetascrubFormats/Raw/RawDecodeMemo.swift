// SPDX-License-Identifier: GPL-3.0-or-later
import CNettle
import MetascrubCore
import MetascrubNative
import Synchronization

/// LibRaw's decodes of the last few raws, by the SHA-256 of their bytes. One clean asks for the same decodes
/// again and again: `settle` decodes the original and the in-memory cleaned candidate (`RawDecodeBisection`),
/// `clean` checks the original decodes, and the verification decodes the original and the output, whose bytes are
/// the candidate `settle` accepted. Each of those is the same bytes as an earlier decode, so it is a lookup here
/// instead of a LibRaw unpack (issue 24; `BandMemo` does the same for JPEG band checks). A hit needs the same
/// digest, so it can only return what decoding would; a failed decode is remembered as the same error.
enum RawDecodeMemo {
    struct Entry {
        var digest: [UInt8]
        var result: Result<RawFingerprint, NativeError>
    }

    /// Enough for every raw in flight (`--jobs`) to find its original and its output again after a bisection of
    /// `RawDecodeBisection.decodeLimit` candidates; an entry is 32 bytes and a fingerprint.
    static let capacity = 256
    private static let entries = Mutex<[Entry]>([])
    private static let count = Mutex(0)

    /// LibRaw decodes run by this process (lookups that hit do not count): what the tests pin.
    static var decodes: Int { count.withLock { $0 } }

    /// The decode of `bytes`.
    static func fingerprint(bytes: [UInt8]) throws -> RawFingerprint {
        try remembered(digest(bytes)) { try LibRaw.fingerprint(bytes: bytes) }
    }

    /// The decode of `source`: a file is hashed block by block and decoded by LibRaw from its path, so a large raw
    /// is not copied into memory.
    static func fingerprint(_ source: any ByteSource) throws -> RawFingerprint {
        guard let fd = source.fileDescriptor else { return try fingerprint(bytes: try source.readAll()) }
        return try remembered(digest(source)) { try LibRaw.fingerprint(path: "/proc/self/fd/\(fd)") }
    }

    /// The SHA-256 the memo knows bytes by.
    static func digest(_ bytes: [UInt8]) -> [UInt8] {
        bytes.withUnsafeBytes { sha256($0) }
    }

    /// The same digest of a source's bytes, read block by block.
    static func digest(_ source: any ByteSource) throws -> [UInt8] {
        var ctx = sha256_ctx()
        nettle_sha256_init(&ctx)
        let block: Int64 = 1 << 20
        var offset: Int64 = 0
        while offset < source.size {
            let chunk = try source.read(at: offset, count: Int(min(block, source.size - offset)))
            chunk.withUnsafeBytes { nettle_sha256_update(&ctx, $0.count, $0.baseAddress?.assumingMemoryBound(to: UInt8.self)) }
            offset += Int64(chunk.count)
        }
        return finish(&ctx)
    }

    private static func remembered(_ digest: [UInt8], decode: () throws -> RawFingerprint) throws -> RawFingerprint {
        if let hit = entries.withLock({ $0.last { $0.digest == digest }?.result }) { return try hit.get() }
        count.withLock { $0 += 1 }
        let result: Result<RawFingerprint, NativeError>
        do {
            result = .success(try decode())
        } catch let error as NativeError {
            result = .failure(error)
        }
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeFirst() }
            entries.append(Entry(digest: digest, result: result))
        }
        return try result.get()
    }

    private static func sha256(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        var ctx = sha256_ctx()
        nettle_sha256_init(&ctx)
        nettle_sha256_update(&ctx, bytes.count, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self))
        return finish(&ctx)
    }

    private static func finish(_ ctx: inout sha256_ctx) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        digest.withUnsafeMutableBufferPointer { nettle_sha256_digest(&ctx, 32, $0.baseAddress) }
        return digest
    }
}
