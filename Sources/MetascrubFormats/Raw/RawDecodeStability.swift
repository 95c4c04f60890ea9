// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubNative
import Synchronization

/// Whether LibRaw's decode of a raw means anything. Every proof by decoding (the bisection of what a raw needs,
/// the verification of the cleaned raw) compares two decodes; when LibRaw decodes the same bytes differently
/// (it reads past the end of the file, so what it decodes there is whatever memory or the stream holds), any
/// difference or sameness is chance, and a bisection keeps whatever it happened to try last. Such a raw is
/// cleaned as one LibRaw cannot decode: everything the policy removes goes, every other byte is proven identical.
///
/// Asked only when a comparison already failed (a decode costs as much as the clean), and remembered by digest.
enum RawDecodeStability {
    /// Bytes appended for the second look: a decoder that reads past the end decodes them instead of nothing.
    static let padding = 4096
    static let reason = "LibRaw does not decode it the same way twice "
        + "(it reads past the end of the file or memory it did not fill)"

    private struct Verdict {
        var digest: [UInt8]
        var stable: Bool
    }

    private static let verdicts = Mutex<[Verdict]>([])

    /// LibRaw decodes `bytes` the same twice and the same with bytes appended. A raw LibRaw cannot decode at all
    /// is not asked here (`RawTIFFFormat.fingerprint` fails first).
    static func reproducible(bytes: [UInt8]) -> Bool {
        let digest = RawDecodeMemo.digest(bytes)
        if let known = known(digest) { return known }
        let stable: Bool
        do {
            let first = try LibRaw.fingerprint(bytes: bytes)
            let again = try LibRaw.fingerprint(bytes: bytes)
            let padded = try LibRaw.fingerprint(bytes: bytes + [UInt8](repeating: 0xA5, count: padding))
            stable = first == again && first == padded
        } catch {
            // Decodable alone but not with bytes after it: what it decoded depended on where the file ends.
            stable = false
        }
        verdicts.withLock { all in
            if all.count >= RawDecodeMemo.capacity { all.removeFirst() }
            all.append(Verdict(digest: digest, stable: stable))
        }
        return stable
    }

    static func reproducible(_ source: any ByteSource) throws -> Bool {
        try reproducible(bytes: source.readAll())
    }

    /// What an earlier `reproducible` said about these bytes, without decoding; nil when it was never asked.
    static func known(_ source: any ByteSource) throws -> Bool? {
        // Most processes never ask: no file is hashed for nothing then.
        guard !verdicts.withLock({ $0.isEmpty }) else { return nil }
        return try known(RawDecodeMemo.digest(source))
    }

    private static func known(_ digest: [UInt8]) -> Bool? {
        verdicts.withLock { $0.last { $0.digest == digest }?.stable }
    }
}
