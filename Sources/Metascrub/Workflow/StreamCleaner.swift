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

    /// The report, and the bytes to write (nil: nothing may be written; the report says why). The same path as
    /// a file clean (`clean(_:_:conversion:to:inPlace:report:)`): --allow-uncleaned, a policy's `convert:`, the
    /// orientation re-encode and every check of the `Verifier`, into memory instead of a temp file.
    public func cleanInMemory(_ source: any ByteSource, path: String) -> (FileReport, [UInt8]?) {
        var report = FileReport(path: path, status: .error)
        do {
            report.bytesBefore = source.size
            if options.digests { report.sha256Before = try Hashing.sha256(source) }
            let detected = try detect(source)
            let destination = MemoryDestination()
            try clean(source, detected, conversion: conversionTarget(detected, source), to: destination, inPlace: false, report: &report)
            return (report, destination.bytes)
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

    /// Writes verified bytes to a file, atomically (temp file in the target's folder, fsync, rename), or through
    /// a special file; an existing file is replaced only as `FileDestination` allows.
    public func write(_ bytes: [UInt8], to path: String) throws(MetascrubError) {
        do {
            try FileDestination(path: path, createFolders: false, options: options).commit(write: { sink in
                try sink.write(bytes)
            }, check: { _ in })
        } catch {
            throw Self.typed(error)
        }
    }
}
