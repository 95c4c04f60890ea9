// SPDX-License-Identifier: GPL-3.0-or-later
import CPlatform
import MetascrubCore
import MetascrubFormats

#if canImport(Glibc)
import Glibc
#endif

/// The process's standard streams, for the stdin/stdout filter and the progress bar.
public enum StandardStreams {
    /// Whether standard error is a terminal someone is watching (the only place a progress bar belongs).
    public static var stderrIsTerminal: Bool { isatty(2) == 1 }

    /// Columns of the terminal on standard error (80 when unknown).
    public static var stderrColumns: Int {
        let columns = Int(ms_terminal_columns(2))
        return columns > 0 ? columns : 80
    }

    /// All of standard input, up to `limit` bytes.
    public static func readInput(limit: Int64 = FileProcessor.streamLimit) throws(MetascrubError) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw .io(operation: "read", path: "standard input", errno: errno)
            }
            if n == 0 { return bytes }
            bytes += chunk[0..<n]
            guard Int64(bytes.count) <= limit else {
                throw .limitExceeded(format: "stream", path: "standard input", offset: 0, limit: "\(limit) bytes")
            }
        }
    }

    public static func writeOutput(_ bytes: [UInt8]) throws(MetascrubError) {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { write(1, $0.baseAddress! + done, bytes.count - done) }
            if n < 0 {
                if errno == EINTR { continue }
                throw .io(operation: "write", path: "standard output", errno: errno)
            }
            done += n
        }
    }
}
