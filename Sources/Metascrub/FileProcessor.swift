// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubFormats
import MetascrubNative

/// Where cleaned files go.
public enum OutputMode: Sendable, Equatable {
    /// One input, one named output file.
    case file(String)
    /// Mirror each input under this folder.
    case directory(String)
    /// Replace the input (atomically).
    case inPlace
}

public struct ProcessingOptions: Sendable {
    public var policy: Policy
    public var showValues: Bool
    public var fileSystem: any FileSystem

    public init(policy: Policy, showValues: Bool = false, fileSystem: any FileSystem = PosixFileSystem()) {
        self.policy = policy
        self.showValues = showValues
        self.fileSystem = fileSystem
    }
}

/// The pipeline for one file: detect, scan, decide, and for `clean` write to a temp file, verify, rename.
public struct FileProcessor: Sendable {
    public var options: ProcessingOptions

    public init(options: ProcessingOptions) { self.options = options }

    enum Detected {
        case notMedia
        case unsupported(FormatEntry)
        case handled(FormatEntry, any FormatHandler)
    }

    func detect(_ source: any ByteSource) throws -> Detected {
        let head = try source.read(at: 0, count: Int(min(Int64(Magic.headLength), source.size)))
        guard let entry = FormatRegistry.detect(head) else { return .notMedia }
        guard let handler = entry.handler else { return .unsupported(entry) }
        return .handled(entry, handler)
    }

    // MARK: scan

    public func scan(_ input: InputFile) -> FileReport {
        var report = FileReport(path: input.path, status: .error)
        if let problem = input.problem {
            report.error = ErrorInfo(problem)
            return report
        }
        do {
            let source = try FileByteSource(path: input.path)
            report.bytesBefore = source.size
            switch try detect(source) {
            case .notMedia:
                report.status = .skipped
                report.reason = "not-media"
            case .unsupported(let entry):
                report.format = entry.format.id
                report.status = .skipped
                report.reason = "unsupported: \(entry.unsupportedReason ?? "no cleaner")"
            case .handled(let entry, let handler):
                report.format = entry.format.id
                do {
                    let scan = try handler.scan(source, options: ScanOptions(includeValues: options.showValues))
                    report.findings = options.policy.evaluate(scan.items)
                    report.notes = scan.notes
                    report.status = report.actionable.isEmpty ? .clean : .findings
                } catch MetascrubError.unsupported(_, let reason) {
                    // A variant only the handler can tell apart (a DNG inside TIFF): reported like any
                    // unsupported format by scan; clean still refuses it.
                    report.status = .skipped
                    report.reason = "unsupported: \(reason)"
                }
            }
        } catch {
            report.status = .error
            report.error = ErrorInfo(Self.typed(error))
        }
        return report
    }

    // MARK: clean

    public func clean(_ input: InputFile, output mode: OutputMode) -> FileReport {
        var report = FileReport(path: input.path, status: .error)
        if let problem = input.problem {
            report.error = ErrorInfo(problem)
            return report
        }
        let target: String
        switch mode {
        case .file(let path): target = path
        case .directory(let dir): target = Paths.join(dir, input.relative)
        case .inPlace: target = input.path
        }
        do {
            let source = try FileByteSource(path: input.path)
            report.bytesBefore = source.size
            let detected = try detect(source)
            // Hash only what will be written: a refused file costs no full read.
            if case .unsupported = detected {} else { report.sha256Before = try Hashing.sha256(source) }
            switch detected {
            case .notMedia:
                // In a mirrored folder the rest of the site must be there too; anything else is an error,
                // because the user asked for this file to be cleaned.
                guard case .directory = mode else {
                    throw MetascrubError.unsupported(format: "unknown", reason: "not a recognised media file; nothing was written")
                }
                try write(copyOf: source, to: target, report: &report)
                report.status = .skipped
                report.reason = "not-media"
                report.method = .copy
            case .unsupported(let entry):
                report.format = entry.format.id
                throw MetascrubError.unsupported(format: entry.format.name, reason: "\(entry.unsupportedReason ?? "no cleaner"); nothing was written")
            case .handled(let entry, let handler):
                report.format = entry.format.id
                try clean(source, handler: handler, target: target, mode: mode, report: &report)
            }
        } catch {
            report.status = .error
            report.error = ErrorInfo(Self.typed(error))
            report.output = nil
        }
        return report
    }

    private func clean(_ source: FileByteSource, handler: any FormatHandler, target: String, mode: OutputMode, report: inout FileReport) throws {
        let scanOptions = ScanOptions(includeValues: options.showValues)
        let scan = try handler.scan(source, options: scanOptions)
        let findings = options.policy.evaluate(scan.items)
        report.findings = findings
        report.notes = scan.notes
        let forbidden = findings.filter { $0.disposition == .fail && $0.item.parent == nil }
        if !forbidden.isEmpty {
            throw MetascrubError.policyViolation(keys: Array(Set(forbidden.map(\.item.key))).sorted())
        }
        let plan = CleanPlan(findings: findings, policy: options.policy)
        if findings.allSatisfy({ $0.disposition == .keep }) {
            report.status = .clean
            report.findings = findings.map { var f = $0; f.outcome = .kept; return f }
            if mode != .inPlace {
                try write(copyOf: source, to: target, report: &report)
                report.method = .copy
            }
            return
        }

        let writer = AtomicWriter(fileSystem: options.fileSystem)
        var result = CleanResult(method: .remux)
        let createFolders: Bool
        if case .directory = mode { createFolders = true } else { createFolders = false }
        try writer.replace(target, createFolders: createFolders, write: { sink in
            result = try handler.clean(source, scan: scan, plan: plan, to: sink)
        }, check: { temp in
            // Verify before anything replaces anything: scan the output again with the same policy.
            let cleaned = try FileByteSource(path: temp)
            let rescan: ScanResult
            do {
                rescan = try handler.scan(cleaned, options: ScanOptions())
            } catch {
                throw MetascrubError.verificationFailed(reason: "the cleaned file does not parse: \(Self.typed(error).description)")
            }
            let remaining = Array(Set(options.policy.evaluate(rescan.items)
                .filter { $0.disposition != .keep && !result.acceptedResiduals.contains($0.item.key) }
                .map(\.item.key))).sorted()
            let content = try handler.verifyContent(original: source, originalScan: scan, cleaned: cleaned, cleanedScan: rescan, result: result)
            report.verification = Verification(
                rescan: remaining.isEmpty ? .passed : .failed, remaining: remaining,
                content: content.method, contentResult: content.passed ? .passed : .failed)
            guard remaining.isEmpty else {
                throw MetascrubError.verificationFailed(reason: "still present after cleaning: \(remaining.joined(separator: ", "))")
            }
            guard content.passed else {
                throw MetascrubError.verificationFailed(reason: "image content changed: \(content.detail ?? content.method)")
            }
            if mode == .inPlace { Self.copyPermissions(from: source.path, to: temp, options.fileSystem) }
            report.sha256After = try Hashing.sha256(cleaned)
            report.bytesAfter = cleaned.size
        })

        report.status = .cleaned
        report.method = result.method
        report.output = target
        report.notes += result.notes
        report.findings = findings.enumerated().map { index, finding in
            var f = finding
            if let outcome = result.outcomes[index] {
                f.outcome = outcome
            } else {
                f.outcome = finding.disposition == .keep ? .kept : .removed
            }
            return f
        }
    }

    /// Copies a file unchanged to its destination, atomically (used when nothing needs removing).
    private func write(copyOf source: FileByteSource, to target: String, report: inout FileReport) throws {
        guard target != source.path else { return }
        try AtomicWriter(fileSystem: options.fileSystem).replace(target, createFolders: true, write: { sink in
            try sink.copy(from: source, offset: 0, count: source.size)
        }, check: { _ in })
        report.output = target
        report.bytesAfter = source.size
        report.sha256After = report.sha256Before
    }

    /// The replacement of an in-place clean keeps the original's permission bits.
    static func copyPermissions(from original: String, to temp: String, _ fs: any FileSystem) {
        var st = stat()
        guard stat(original, &st) == 0 else { return }
        let fd = open(temp, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        try? fs.setMode(fd, mode: st.st_mode & 0o7777, path: temp)
        fs.close(fd)
    }

    static func typed(_ error: any Error) -> MetascrubError {
        if let e = error as? MetascrubError { return e }
        if let e = error as? NativeError, case .library(let name, let message) = e { return .library(name: name, message: message) }
        if let e = error as? LosslessJPEGError { return .library(name: "libturbojpeg", message: "\(e)") }
        return .library(name: "metascrub", message: String(describing: type(of: error)))
    }
}

#if canImport(Glibc)
import Glibc
#endif
