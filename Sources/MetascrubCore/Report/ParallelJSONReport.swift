// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Foundation
import Synchronization

/// `JSONReportRenderer`'s bytes for a report of many files, with the files' reports encoded on every core (issue 25,
/// round 3: Foundation's encoder was a fifth of `scan --json DIR`'s CPU, on one thread after the scan). The report
/// without its files is encoded, and each file's report, encoded on its own and indented to its place, goes where the
/// empty `files` array was. Pretty-printing breaks lines only between values (a newline inside a string is escaped)
/// and leaves blank lines unindented, so indenting every other line by two levels gives the single encoder's bytes.
enum ParallelJSONReport {
    /// Fewer files are encoded in one piece: the split costs more than it saves.
    static let minimumFiles = 32
    private static let emptyFiles = Array("\"files\" : [\n\n  ]".utf8)
    private static let pad: [UInt8] = Array("    ".utf8)

    /// The rendering, or nil when the report is small or its shape is not the one expected (the caller then
    /// encodes it in one piece).
    static func render(_ report: Report, encoder: @Sendable () -> JSONEncoder) throws -> [UInt8]? {
        guard report.files.count >= minimumFiles else { return nil }
        var shell = report
        shell.files = []
        let top = [UInt8](try encoder().encode(shell))
        guard let at = only(emptyFiles, in: top) else { return nil }
        let files = report.files
        let workers = max(1, min(ProcessInfo.processInfo.activeProcessorCount, 8))
        let per = (files.count + workers - 1) / workers
        let parts = Mutex([[UInt8]?](repeating: nil, count: workers))
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            let json = encoder()
            var out: [UInt8] = []
            for index in min(files.count, worker * per)..<min(files.count, (worker + 1) * per) {
                guard let one = try? json.encode(files[index]) else { return }
                if !out.isEmpty { out += Array(",\n".utf8) }
                indent(one, into: &out)
            }
            parts.withLock { $0[worker] = out }
        }
        let encoded = parts.withLock { $0 }
        // A file whose report did not encode: the single encoder says why.
        guard encoded.allSatisfy({ $0 != nil }) else { return nil }
        var out = Array(top[..<at])
        out += Array("\"files\" : [\n".utf8)
        var first = true
        for part in encoded.compactMap({ $0 }) where !part.isEmpty {
            if !first { out += Array(",\n".utf8) }
            out += part
            first = false
        }
        out += Array("\n  ]".utf8)
        out += top[(at + emptyFiles.count)...]
        return out
    }

    /// Every line that is not blank, two levels (four spaces) further in.
    static func indent(_ json: Data, into out: inout [UInt8]) {
        out.reserveCapacity(out.count + json.count + json.count / 8)
        json.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
            guard let base = raw.baseAddress else { return }
            let bytes = raw.bindMemory(to: UInt8.self)
            var start = 0
            while start < bytes.count {
                let newline = memchr(base + start, 0x0A, bytes.count - start).map { UnsafeRawPointer($0) - base } ?? bytes.count
                if newline > start { out.append(contentsOf: pad) }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<newline]))
                if newline < bytes.count { out.append(0x0A) }
                start = newline + 1
            }
        }
    }

    /// Where `pattern` starts in `bytes`, when it occurs exactly once.
    static func only(_ pattern: [UInt8], in bytes: [UInt8]) -> Int? {
        var found: Int?
        var start = 0
        while start + pattern.count <= bytes.count {
            if bytes[start] == pattern[0], bytes[start..<start + pattern.count].elementsEqual(pattern) {
                if found != nil { return nil }
                found = start
            }
            start += 1
        }
        return found
    }
}
