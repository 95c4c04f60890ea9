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
                    report.findings = try Decide(policy: options.policy).decisions(scan, source)
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

    /// Decide → Produce → Prove → Commit → Report, each stage a value in and a value out (`Pipeline/`). The
    /// orientation re-encode (`reencode: true`, a bake no lossless transform does) is a step of this path, not a
    /// path of its own.
    private func clean(_ source: any ByteSource, handler: AnyFormatHandler, to destination: any CleanDestination, inPlace: Bool,
                       report: inout FileReport) throws {
        let decide = Decide(policy: options.policy)
        let decision = try decide(source, handler: handler)
        report.record(decision, showValues: options.showValues)
        if let refusal = decide.refusal(decision) { throw refusal }
        if decision.keepsEverything {
            report.recordClean(decision, showValues: options.showValues)
            // Nothing changes: the output's bytes, so its bindings, are the original's.
            report.recordBindings(before: decision.scan.provenance, after: decision.scan.provenance, findings: decision.findings)
            if !inPlace {
                try write(copyOf: source, to: destination, report: &report)
                report.method = .copy
            }
            return
        }
        let produce = Produce(policy: options.policy, layout: options.layout)
        if let need = decision.scan.reencodableBake(input: source, plan: produce.plan(decision)) {
            try OrientationReencoder(options: options).clean(source, scan: decision.scan, findings: decision.findings,
                                                             plan: produce.plan(decision), need: need, to: destination, report: &report)
            return
        }
        let prove = Prove(options: options)
        var result = CleanResult(method: .remux)
        var proof: Proof?
        do {
            try destination.commit(write: { sink in
                result = try produce(source, decision, to: sink)
            }, check: { cleaned in
                // Proven before anything replaces anything.
                proof = try prove(original: source, decision, result, cleaned: cleaned)
            })
        } catch let failure as ProofFailure {
            report.verification = failure.verification
            if let manifests = failure.outputManifests {
                report.recordBindings(before: decision.scan.provenance, after: manifests, findings: decision.findings)
            }
            throw failure.error
        }
        if let proof {
            report.record(proof)
            report.recordBindings(before: decision.scan.provenance, after: proof.outputManifests, findings: decision.findings)
        }
        report.recordCleaned(result, findings: decision.findings, output: destination.name, showValues: options.showValues)
    }

    /// Copies the source unchanged to its destination (nothing needs removing, or --allow-uncleaned).
    func write(copyOf source: any ByteSource, to destination: any CleanDestination, report: inout FileReport) throws {
        if let file = destination as? FileDestination, let input = source as? FileByteSource, file.path == input.path { return }
        try destination.commit(copyOf: source)
        report.output = destination.name
        report.bytesAfter = source.size
        report.sha256After = report.sha256Before
    }

    static func typed(_ error: any Error) -> MetascrubError {
        if let e = error as? MetascrubError { return e }
        if let failure = error as? ProofFailure { return failure.error }
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
