// SPDX-License-Identifier: GPL-3.0-or-later

/// Every failure the tool reports, with where in the file it happened. Messages never contain metadata values.
public enum MetascrubError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file ends before a structure it announced: `needed` bytes at `offset`.
    case truncated(format: String, path: String, offset: Int64, needed: Int64)
    /// A structure is inconsistent (a length below its minimum, an offset outside its parent).
    case malformed(format: String, path: String, offset: Int64, reason: String)
    /// The file asks for more than the tool allows (nesting, counts, decompressed sizes).
    case limitExceeded(format: String, path: String, offset: Int64, limit: String)
    /// A media format the tool recognises but cannot do this operation on.
    case unsupported(format: String, reason: String)
    /// The cleaned output failed verification; nothing was written.
    case verificationFailed(reason: String)
    /// The policy forbids an item (`fail`), so the file is refused.
    case policyViolation(keys: [String])
    /// A system call failed.
    case io(operation: String, path: String, errno: Int32)
    /// A C library refused the data.
    case library(name: String, message: String)
    /// A policy file is invalid.
    case policy(file: String, line: Int?, key: String?, message: String)
    /// Command-line usage error.
    case usage(String)
    /// Two stages of the tool disagree about one file (a bug, never the file's fault): the file is refused, since
    /// a check that cannot run has proven nothing.
    case inconsistent(stage: String, reason: String)

    /// A short stable code for reports and SARIF.
    public var code: String {
        switch self {
        case .truncated: "truncated"
        case .malformed: "malformed"
        case .limitExceeded: "limit-exceeded"
        case .unsupported: "unsupported"
        case .verificationFailed: "verification-failed"
        case .policyViolation: "policy-violation"
        case .io: "io"
        case .library: "library"
        case .policy: "policy"
        case .usage: "usage"
        case .inconsistent: "internal-error"
        }
    }

    /// Byte offset in the file where the problem is, when known.
    public var offset: Int64? {
        switch self {
        case .truncated(_, _, let offset, _), .malformed(_, _, let offset, _), .limitExceeded(_, _, let offset, _):
            offset
        default: nil
        }
    }

    public var description: String {
        switch self {
        case .truncated(let format, let path, let offset, let needed):
            "\(format): truncated at \(path) (offset \(offset)): \(needed) more bytes expected"
        case .malformed(let format, let path, let offset, let reason):
            "\(format): malformed \(path) at offset \(offset): \(reason)"
        case .limitExceeded(let format, let path, let offset, let limit):
            "\(format): \(path) at offset \(offset) exceeds the limit: \(limit)"
        case .unsupported(let format, let reason):
            "\(format): \(reason)"
        case .verificationFailed(let reason):
            "verification failed, nothing written: \(reason)"
        case .policyViolation(let keys):
            "the policy forbids \(keys.joined(separator: ", ")); the file is refused"
        case .io(let operation, let path, let errno):
            "\(operation) \(path): \(SystemErrorText.describe(errno))"
        case .library(let name, let message):
            "\(name): \(message)"
        case .policy(let file, let line, let key, let message):
            "\(file)\(line.map { ":\($0)" } ?? "")\(key.map { ": \($0)" } ?? ""): \(message)"
        case .usage(let message):
            message
        case .inconsistent(let stage, let reason):
            "internal error in \(stage), nothing written: \(reason)"
        }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// strerror without Foundation.
enum SystemErrorText {
    static func describe(_ code: Int32) -> String {
        guard let text = strerror(code) else { return "errno \(code)" }
        return String(cString: text)
    }
}
