// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubFormats

/// `clean - --output -`: a filter from standard input to standard output.
///
/// Temp files belong in the destination folder (so the final rename is atomic and nothing lands in a shared
/// /tmp), and standard output has no folder. So the input is read into memory, cleaned into memory, verified
/// from memory, and only then written out: a reader of the pipe never sees unverified bytes, and nothing is
/// ever written to disk. The cost is memory proportional to the file (bounded by `limit`).
extension FileProcessor {
    public static let streamLimit: Int64 = 1 << 30

    /// The report, and the bytes to write (nil: nothing may be written; the report says why).
    public func cleanInMemory(_ source: any ByteSource, path: String) -> (FileReport, [UInt8]?) {
        var report = FileReport(path: path, status: .error)
        do {
            report.bytesBefore = source.size
            if options.digests { report.sha256Before = try Hashing.sha256(source) }
            switch try detect(source) {
            case .notMedia:
                throw MetascrubError.unsupported(format: "unknown", reason: "not a recognised media file; nothing was written")
            case .unsupported(let entry):
                report.format = entry.format.id
                let reason = entry.unsupportedReason ?? "no cleaner"
                guard options.allowUncleaned else {
                    throw MetascrubError.unsupported(format: entry.format.name, reason: "\(reason); nothing was written (--allow-uncleaned copies such files unchanged)")
                }
                report.status = .skipped
                report.reason = "uncleaned: \(entry.format.name) copied unchanged (--allow-uncleaned)"
                report.notes = [Note(.warning, code: "uncleaned", "\(entry.format.name) cannot be cleaned: \(reason); its metadata is still there")]
                report.method = .copy
                return (report, try source.readAll(limit: Self.streamLimit))
            case .handled(let entry, let handler):
                report.format = entry.format.id
                let (scan, findings, plan) = try decide(source, handler: handler, report: &report)
                guard let plan else {
                    report.method = .copy
                    report.output = "-"
                    return (report, try source.readAll(limit: Self.streamLimit))
                }
                let sink = MemoryOutputSink()
                let result = try scan.clean(source, plan: plan, to: sink)
                try verify(original: source, scan: scan, findings: findings, result: result,
                           cleaned: MemoryByteSource(sink.bytes), report: &report)
                record(result, findings: findings, output: "-", report: &report)
                return (report, sink.bytes)
            }
        } catch {
            report.status = .error
            report.error = ErrorInfo(Self.typed(error))
            report.output = nil
            return (report, nil)
        }
    }

    /// `clean PATH|- --output -|FILE`: reads the input (standard input for "-"), cleans and verifies it in memory,
    /// then writes the bytes to standard output ("-") or atomically to a file. Throws only when the input
    /// cannot be read; everything after that is in the report.
    public func cleanStream(_ path: String, to output: String?) throws(MetascrubError) -> FileReport {
        let source: any ByteSource
        do {
            source = path == "-" ? MemoryByteSource(try StandardStreams.readInput()) : try FileByteSource(path: path)
        } catch {
            throw Self.typed(error)
        }
        var (file, bytes) = cleanInMemory(source, path: path)
        guard let bytes else { return file }
        do throws(MetascrubError) {
            if output == "-" {
                try StandardStreams.writeOutput(bytes)
            } else if let output {
                try write(bytes, to: output)
                file.output = output
            }
        } catch {
            file.status = .error
            file.error = ErrorInfo(error)
            file.output = nil
        }
        return file
    }

    /// Writes verified bytes to a file, atomically (temp file in the target's folder, fsync, rename).
    public func write(_ bytes: [UInt8], to path: String) throws(MetascrubError) {
        do {
            try AtomicWriter(fileSystem: options.fileSystem).replace(path, createFolders: false, write: { sink in
                try sink.write(bytes)
            }, check: { _ in })
        } catch {
            throw Self.typed(error)
        }
    }
}
