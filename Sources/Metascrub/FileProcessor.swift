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
    /// Written files get the original's modification (and access) time.
    public var keepModificationTime: Bool
    /// A recognised media file that cannot be cleaned (a camera raw) is copied unchanged (--output-dir,
    /// --output) or left as it is (--in-place) with a warning, instead of failing the run.
    public var allowUncleaned: Bool
    /// Temp files a killed run left behind, removed from each folder this run writes to (once per folder).
    public var staleTemporaries: StaleTemporaries
    /// Output layout choices (`--faststart`), passed to the format handlers with the policy's decisions.
    public var layout = LayoutOptions()
    /// SHA-256 of every input and output for the report. Only the JSON report shows them, and hashing both
    /// sides cost more than the rest of a JPEG clean (docs/benchmarks.md), so the CLI turns it off otherwise.
    public var digests = true
    /// The format table detection reads (the registry's; tests put a faulty handler in a row to see verification fail).
    public var formats: [FormatEntry] = FormatRegistry.entries
    /// `--convert`/`--quality`: HEIC/HEIF/AVIF and JPEG XL written as JPEG or PNG (see `ImageConverter`).
    public var conversion = ConversionOptions()
    /// An existing file at an output path may be replaced whatever it holds. Without it, only by the same bytes
    /// (an earlier run's output of the same input); anything else is refused for that file. A library caller
    /// names its outputs itself; the CLI turns this off unless `--overwrite`.
    public var overwrite = true
    /// `--copy-unsupported`: documents metascrub does not read but that carry metadata (`UncheckedFormats`) are
    /// copied unchanged (or left, in place) with a warning instead of being left out and failing the run.
    public var copyUnsupported = false

    public init(policy: Policy, showValues: Bool = false, fileSystem: any FileSystem = PosixFileSystem(),
                keepModificationTime: Bool = false, allowUncleaned: Bool = false) {
        self.staleTemporaries = StaleTemporaries()
        self.policy = policy
        self.showValues = showValues
        self.fileSystem = fileSystem
        self.keepModificationTime = keepModificationTime
        self.allowUncleaned = allowUncleaned
    }
}

/// The pipeline for one file: detect, scan, decide, and for `clean` write to a temp file, verify, rename.
public struct FileProcessor: Sendable {
    public var options: ProcessingOptions

    public init(options: ProcessingOptions) { self.options = options }

    enum Detected {
        case notMedia
        case unsupported(FormatEntry)
        case handled(FormatEntry, AnyFormatHandler)
    }

    func detect(_ source: any ByteSource) throws -> Detected {
        let head = try source.read(at: 0, count: Int(min(Int64(Magic.headLength), source.size)))
        guard let entry = try FormatRegistry.detect(source, head: head, in: options.formats) else { return .notMedia }
        guard let handler = entry.handler else { return .unsupported(entry) }
        return .handled(entry, handler)
    }

    // MARK: scan

    public func scan(_ input: InputFile) -> FileReport {
        if let early = Self.notRead(input) { return early }
        var report = FileReport(path: input.path, status: .error)
        do {
            return scan(source: try options.fileSystem.openForReading(input.path), path: input.path)
        } catch {
            report.error = ErrorInfo(Self.typed(error))
            return report
        }
    }

    /// Scans bytes from anywhere (a file, a git blob, standard input); `path` is what the report names.
    public func scan(source: any ByteSource, path: String) -> FileReport {
        var report = FileReport(path: path, status: .error)
        do {
            report.bytesBefore = source.size
            switch try detect(source) {
            case .notMedia:
                report.status = .skipped
                try Self.refuseEmptyMedia(source, path)
                report.reason = try Self.unchecked(source).map(Self.notChecked) ?? "not-media"
            case .unsupported(let entry):
                report.format = entry.format.id
                report.status = .skipped
                report.reason = "unsupported: \(entry.unsupportedReason ?? "no cleaner")"
            case .handled(let entry, let handler):
                report.format = entry.format.id
                do {
                    let scan = try handler.scan(source, options: ScanOptions(includeValues: options.showValues, tolerateDamage: options.policy.damaged == .clean))
                    report.findings = try decisions(scan, source)
                    report.notes = scan.notes
                    report.describe(manifests: scan.provenance, showValues: options.showValues)
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

    /// The report for an input that is not read at all: the walk could not list it, or skips it.
    static func notRead(_ input: InputFile) -> FileReport? {
        if let problem = input.problem {
            var report = FileReport(path: input.path, status: .error)
            report.error = ErrorInfo(problem)
            return report
        }
        return input.skip.map { skipped(input, $0) }
    }

    static func skipped(_ input: InputFile, _ skip: InputFile.Skip) -> FileReport {
        var report = FileReport(path: input.path, status: .skipped)
        report.reason = skip.reason
        if skip == .symlinkOutside {
            report.notes = [Note(.warning, code: "symlink-outside", "a symbolic link leading outside the input folder was not followed")]
        }
        return report
    }

    // MARK: clean

    public func clean(_ input: InputFile, output mode: OutputMode) -> FileReport {
        if let early = Self.notRead(input) { return early }
        var report = FileReport(path: input.path, status: .error)
        do {
            let target: String
            switch mode {
            case .file(let path): target = path
            case .directory(let dir): target = try OutputTarget.inside(dir, input.relative)
            case .inPlace: target = input.path
            }
            removeStaleTemporaries(near: target, report: &report)
            let source = try options.fileSystem.openForReading(input.path)
            report.bytesBefore = source.size
            let detected = try detect(source)
            // Hash only what will be written: a refused file costs no full read.
            if case .unsupported = detected {} else if options.digests { report.sha256Before = try Hashing.sha256(source) }
            let createFolders: Bool
            if case .directory = mode { createFolders = true } else { createFolders = false }
            if case .notMedia = detected { try Self.refuseEmptyMedia(source, input.path) }
            if case .notMedia = detected, let format = try Self.unchecked(source) {
                try passOn(unchecked: format, source, mode: mode, target: target, report: &report)
                return report
            }
            if case .notMedia = detected {
                switch mode {
                case .directory:
                    // In a mirrored folder the rest of the site must be there too.
                    try write(copyOf: source, to: FileDestination(path: target, createFolders: true, options: options, attributesFrom: source),
                              report: &report)
                    report.method = .copy
                case .inPlace where !input.explicit:
                    break // found in a folder being cleaned in place: nothing to do
                default:
                    // The user named this file to be cleaned: passing it on as clean would be a lie.
                    throw MetascrubError.unsupported(format: "unknown", reason: "not a recognised media file; nothing was written")
                }
                report.status = .skipped
                report.reason = "not-media"
                return report
            }
            let conversion = conversionTarget(detected, source)
            // A conversion writes a file of another format, named after it.
            let path = try conversion.map { try ImageConverter.target(for: input, mode: mode, conversion: $0) } ?? target
            let destination = FileDestination(path: path, createFolders: createFolders, options: options, attributesFrom: source,
                                              inPlace: mode == .inPlace)
            try clean(source, detected, conversion: conversion, to: destination, inPlace: mode == .inPlace, report: &report)
            report.notes += destination.notes.all
        } catch {
            report.status = .error
            report.error = ErrorInfo(Self.typed(error))
            report.output = nil
        }
        return report
    }

    /// `--convert` or the policy's `convert:`, for a format that has a cleaner and a decoder.
    func conversionTarget(_ detected: Detected, _ source: any ByteSource) -> ConversionTarget? {
        guard case .handled(let entry, _) = detected else { return nil }
        return options.conversionTarget(for: entry.format.id, source: source)
    }

    /// The one path every clean takes, whatever its destination (a file, standard output): a format without a
    /// cleaner is refused or, with --allow-uncleaned, copied; a conversion re-encodes; everything else is decided,
    /// cleaned (a remux, or the orientation re-encode), verified by the one `Verifier`, and only then committed.
    func clean(_ source: any ByteSource, _ detected: Detected, conversion: ConversionTarget?, to destination: any CleanDestination,
               inPlace: Bool, report: inout FileReport) throws {
        switch detected {
        case .notMedia:
            throw MetascrubError.unsupported(format: "unknown", reason: "not a recognised media file; nothing was written")
        case .unsupported(let entry):
            report.format = entry.format.id
            try uncleaned(source, format: entry.format.name, reason: entry.unsupportedReason ?? "no cleaner",
                          to: destination, inPlace: inPlace, report: &report)
        case .handled(let entry, let handler):
            report.format = entry.format.id
            if let conversion {
                try ImageConverter(options: options).convert(source, handler: handler, format: entry.format.id, to: conversion,
                                                              destination: destination, report: &report)
                return
            }
            do {
                try clean(source, handler: handler, to: destination, inPlace: inPlace, report: &report)
            } catch MetascrubError.unsupported(_, let reason) where report.findings.isEmpty {
                // A variant only the handler tells apart (a DNG inside TIFF): treated like any raw.
                try uncleaned(source, format: entry.format.name, reason: reason, to: destination, inPlace: inPlace, report: &report)
            }
        }
    }

    /// Temp files a killed run left in the folder this file is written to (see `StaleTemporaries`).
    private func removeStaleTemporaries(near target: String, report: inout FileReport) {
        let removed = options.staleTemporaries.sweep(Paths.directory(of: target), fileSystem: options.fileSystem)
        if !removed.isEmpty {
            report.notes.append(Note(.info, code: "stale-temporary-removed",
                                     "removed \(removed.count) temporary file(s) left in \(Paths.directory(of: target)) by an interrupted run"))
        }
    }

    /// A recognised media file that cannot be cleaned. Copying it into a publish folder would leak what it
    /// carries, so this is an error unless the user allowed it (--allow-uncleaned).
    private func uncleaned(_ source: any ByteSource, format: String, reason: String, to destination: any CleanDestination,
                           inPlace: Bool, report: inout FileReport) throws {
        guard options.allowUncleaned else {
            throw MetascrubError.unsupported(format: format, reason: "\(reason); nothing was written (--allow-uncleaned copies such files unchanged)")
        }
        report.findings = []
        report.status = .skipped
        if inPlace {
            report.reason = "uncleaned: \(format) left as it was (--allow-uncleaned)"
        } else {
            if options.digests { report.sha256Before = try Hashing.sha256(source) }
            try write(copyOf: source, to: destination, report: &report)
            report.method = .copy
            report.reason = "uncleaned: \(format) copied unchanged (--allow-uncleaned)"
        }
        report.notes.append(Note(.warning, code: "uncleaned", "\(format) cannot be cleaned: \(reason); its metadata is still there"))
    }

    /// Decide → clean → verify → commit. The orientation re-encode (`reencode: true`, a bake no lossless
    /// transform does) is a step of this path, not a path of its own.
    private func clean(_ source: any ByteSource, handler: AnyFormatHandler, to destination: any CleanDestination, inPlace: Bool,
                       report: inout FileReport) throws {
        let (scan, findings, plan) = try decide(source, handler: handler, report: &report)
        guard let plan else {
            // Nothing changes: the output's bytes, so its bindings, are the original's.
            report.recordBindings(before: scan.provenance, after: scan.provenance, findings: findings)
            if !inPlace {
                try write(copyOf: source, to: destination, report: &report)
                report.method = .copy
            }
            return
        }
        if let need = scan.reencodableBake(input: source, plan: plan) {
            try OrientationReencoder(options: options).clean(source, scan: scan, findings: findings, plan: plan,
                                                             need: need, to: destination, report: &report)
            return
        }
        var result = CleanResult(method: .remux)
        try destination.commit(write: { sink in
            result = try scan.clean(source, plan: plan, to: sink)
        }, check: { cleaned in
            // Verify before anything replaces anything (`Verifier`).
            try verify(original: source, scan: scan, findings: findings, result: result, cleaned: cleaned, report: &report)
        })
        record(result, findings: findings, output: destination.name, report: &report)
    }

    /// Scans and applies the policy. Throws when the policy forbids an item; returns no plan (and marks the
    /// report clean) when nothing needs removing.
    func decide(_ source: any ByteSource, handler: AnyFormatHandler, report: inout FileReport) throws -> (FormatScan, [Finding], CleanPlan?) {
        let (scan, findings) = try scanAndDecide(source, handler: handler, report: &report)
        if findings.allSatisfy({ $0.disposition == .keep }) {
            report.status = .clean
            report.findings = findings.map { var f = $0; f.outcome = f.plannedOutcome; return f }.forReport(showValues: options.showValues)
            return (scan, findings, nil)
        }
        return (scan, findings, CleanPlan(findings: findings, policy: options.policy, layout: options.layout))
    }

    /// Scans (honouring `damaged:`) and settles the policy's decisions, into the report. Throws when the
    /// policy forbids an item. Clean and conversion both start here.
    /// Always scanned with values: the residue proof searches the output for them (the report shows them only
    /// under `--show-values`).
    func scanAndDecide(_ source: any ByteSource, handler: AnyFormatHandler, report: inout FileReport) throws -> (FormatScan, [Finding]) {
        let scan = try handler.scan(source, options: ScanOptions(includeValues: true, tolerateDamage: options.policy.damaged == .clean))
        let findings = try decisions(scan, source)
        report.findings = findings.forReport(showValues: options.showValues)
        report.notes += scan.notes
        report.describe(manifests: scan.provenance, showValues: options.showValues)
        let forbidden = findings.filter { $0.disposition == .fail && $0.item.parent == nil }
        // A signed manifest refused under `provenance: fail`: the report says what would have broken it.
        for finding in forbidden where finding.rule.hasPrefix("provenance fail: ") {
            report.notes.append(Note(.error, code: "provenance-refused",
                                     "C2PA manifest not broken (provenance: fail): \(finding.rule.dropFirst("provenance fail: ".count))",
                                     offset: finding.item.offset))
        }
        if !forbidden.isEmpty {
            throw MetascrubError.policyViolation(keys: Array(Set(forbidden.map(\.item.key))).sorted())
        }
        if findings.contains(where: { $0.disposition != .keep }) { try Verifier(options: options).checkWalked(scan.notes) }
        return (scan, findings)
    }

    /// The policy's decision for every item, settled by the handler: the one meaning scan, clean and the
    /// verification's re-scan share, so that what clean keeps is never reported as still to remove.
    func decisions(_ scan: FormatScan, _ source: any ByteSource) throws -> [Finding] {
        try scan.settle(options.policy.evaluate(scan.items), input: source, policy: options.policy)
    }

    /// Marks a verified, written clean in the report, with each finding's outcome.
    func record(_ result: CleanResult, findings: [Finding], output: String, report: inout FileReport) {
        report.status = .cleaned
        report.method = result.method
        report.output = output
        report.notes += result.notes
        for finding in findings where finding.disposition == .keep {
            guard let reason = finding.reason else { continue }
            let orientation = Policy.orientationKeys.contains(finding.item.key)
            report.notes.append(Note(orientation ? .warning : .info, code: orientation ? "orientation-fallback" : "kept-instead",
                                     "\(finding.item.key) kept: \(reason)"))
        }
        // A signed manifest that goes although the policy keeps provenance: the report says why, not only -v.
        for finding in findings where finding.disposition == .remove && finding.rule.hasPrefix("provenance keep-valid: ") {
            report.notes.append(Note(.warning, code: "provenance-removed",
                                     "C2PA manifest removed: \(finding.rule.dropFirst("provenance keep-valid: ".count))",
                                     offset: finding.item.offset))
        }
        report.findings = findings.enumerated().map { index, finding in
            var f = finding
            f.outcome = result.outcomes[index] ?? finding.plannedOutcome
            return f
        }.forReport(showValues: options.showValues)
    }

    /// Every check of a cleaned output (`Verifier`): throws, so nothing is written, unless it passes.
    func verify(original source: any ByteSource, scan: FormatScan, findings: [Finding], result: CleanResult,
                cleaned: any ByteSource, report: inout FileReport) throws {
        try Verifier(options: options).verify(original: source, scan: scan, findings: findings, result: result, cleaned: cleaned, report: &report)
    }

    /// Copies the source unchanged to its destination (nothing needs removing, or --allow-uncleaned).
    func write(copyOf source: any ByteSource, to destination: any CleanDestination, report: inout FileReport) throws {
        if let file = destination as? FileDestination, let input = source as? FileByteSource, file.path == input.path { return }
        try destination.commit(copyOf: source)
        report.output = destination.name
        report.bytesAfter = source.size
        report.sha256After = report.sha256Before
    }

    /// Every written file keeps the original's permission bits (the temp file starts as 0600, which would
    /// make a published site unreadable), and with --keep-mtime its times. A file replaced in place
    /// (`keepIdentity`) also keeps its owner, group and extended attributes (ACLs are among them): otherwise a
    /// clean run as root would hand every file to root. What cannot be kept is returned as warnings.
    func applyAttributes(from source: FileByteSource, toTemp temp: String, keepIdentity: Bool = false) throws -> [Note] {
        let fs = options.fileSystem
        var st = stat()
        guard let sourceFD = source.fileDescriptor, fstat(sourceFD, &st) == 0 else { return [] }
        let fd = try fs.openForAttributes(temp)
        defer { fs.close(fd) }
        // Owner first: chown clears set-user-ID and set-group-ID bits, which the mode then restores.
        let notes = keepIdentity ? OwnershipKeeper.copy(from: sourceFD, stat: st, to: fd) : []
        try fs.setMode(fd, mode: st.st_mode & 0o7777, path: temp)
        if options.keepModificationTime {
            try fs.setTimes(fd, access: st.st_atim, modification: st.st_mtim, path: temp)
        }
        return notes
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

extension Finding {
    /// What a clean does with the item when the cleaner reports nothing else: kept (as a fallback when settled
    /// with a reason) or removed.
    var plannedOutcome: Outcome {
        if disposition == .clean { return .cleaned }
        guard disposition == .keep else { return .removed }
        return reason == nil ? .kept : .keptAsFallback
    }
}
