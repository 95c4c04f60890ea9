// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import MetascrubCore

#if canImport(Glibc)
import Glibc
#endif

/// Streams blobs out of one long-lived `git cat-file --batch`: one request, one answer, so only the blob
/// being checked is in memory, however many files are staged.
final class BlobReader {
    private let process = Process()
    private let input: FileHandle
    private let fd: Int32
    private var buffer: [UInt8] = []
    private var start = 0
    /// Blobs larger than this are reported rather than read into memory.
    static let limit = 1 << 30

    init(_ git: Git) throws(MetascrubError) {
        let inp = Pipe(), out = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["git", "cat-file", "--batch"]
        process.currentDirectoryURL = URL(fileURLWithPath: git.top)
        process.standardInput = inp
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { throw .usage("cannot run git cat-file") }
        input = inp.fileHandleForWriting
        fd = out.fileHandleForReading.fileDescriptor
    }

    deinit {
        try? input.close()
        process.waitUntilExit()
    }

    func blob(_ sha: String) throws(MetascrubError) -> [UInt8] {
        input.write(Data((sha + "\n").utf8))
        // `<sha> blob <size>\n<bytes>\n`, or `<sha> missing\n`.
        let header = String(decoding: try line(), as: UTF8.self).split(separator: " ")
        guard header.count == 3, header[1] == "blob", let size = Int(header[2]) else {
            throw .io(operation: "read staged blob", path: sha, errno: ENOENT)
        }
        guard size <= Self.limit else {
            _ = try bytes(size + 1, keep: false)
            throw .limitExceeded(format: "git", path: "staged blob", offset: 0, limit: "\(Self.limit) bytes")
        }
        var blob = try bytes(size + 1, keep: true)
        blob.removeLast()
        return blob
    }

    private func fill() throws(MetascrubError) {
        if start > 0 {
            buffer.removeFirst(start)
            start = 0
        }
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard n > 0 else { throw .io(operation: "read from", path: "git cat-file", errno: n == 0 ? EPIPE : errno) }
        buffer += chunk[0..<n]
    }

    private func line() throws(MetascrubError) -> [UInt8] {
        while true {
            if let newline = buffer[start...].firstIndex(of: 0x0A) {
                let line = Array(buffer[start..<newline])
                start = newline + 1
                return line
            }
            try fill()
        }
    }

    private func bytes(_ count: Int, keep: Bool) throws(MetascrubError) -> [UInt8] {
        var out: [UInt8] = []
        if keep { out.reserveCapacity(count) }
        var left = count
        while left > 0 {
            if start == buffer.count { buffer.removeAll(keepingCapacity: true); start = 0; try fill() }
            let n = min(left, buffer.count - start)
            if keep { out += buffer[start..<start + n] }
            start += n
            left -= n
        }
        return out
    }
}
