// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import MetascrubCore

/// The worker's JSON report for one file, with the server's spool paths replaced by `upload` and `cleaned`
/// (a client never learns where the server keeps files).
struct WorkerResult: Sendable {
    var report: Report
    var json: Data
    var file: FileReport { report.files[0] }

    /// Reads the report a worker left, or turns how it ended into the error the client gets.
    static func read(_ outcome: WorkerOutcome, job: SpoolJob, timeoutSeconds: Int) throws(ServeError) -> WorkerResult {
        switch outcome {
        case .timedOut:
            throw ServeError(status: .serviceUnavailable, code: "timeout",
                             message: "the file was not processed within \(timeoutSeconds) s; the worker was stopped")
        case .signalled(let signal):
            // A crash or a resource limit (SIGXFSZ, SIGXCPU): the server's side gave out, so retryable.
            throw ServeError(status: .serviceUnavailable, code: "worker-crashed",
                             message: "the worker processing this file was killed by signal \(signal) (a crash or a resource limit); nothing was returned")
        case .failedToStart:
            throw ServeError(status: .serviceUnavailable, code: "worker-unavailable", message: "no worker process could be started")
        case .exited(let status) where status != 0:
            throw ServeError(status: .serviceUnavailable, code: "worker-failed", message: "the worker exited with status \(status); nothing was returned")
        case .exited:
            break
        }
        guard let raw = FileManager.default.contents(atPath: job.report) else {
            throw ServeError(status: .serviceUnavailable, code: "worker-failed", message: "the worker wrote no report")
        }
        let text = String(decoding: raw, as: UTF8.self)
            .replacingOccurrences(of: job.output, with: "cleaned")
            .replacingOccurrences(of: job.input, with: "upload")
            .replacingOccurrences(of: job.directory, with: ".")
        let json = Data(text.utf8)
        guard let report = try? JSONDecoder().decode(Report.self, from: json), report.files.count == 1 else {
            throw ServeError(status: .serviceUnavailable, code: "worker-failed", message: "the worker's report could not be read")
        }
        return WorkerResult(report: report, json: json)
    }

    /// 415 for a file that is not media or a format without a cleaner; 422 for one that cannot be read,
    /// cleaned or verified. nil: the file was handled.
    var refusal: ServeError? {
        switch file.status {
        case .skipped:
            return ServeError(status: .unsupportedMediaType, code: "unsupported",
                              message: file.reason.map { "not a format metascrub can clean (\($0))" } ?? "not a format metascrub can clean")
        case .error:
            let error = file.error ?? ErrorInfo(code: "error", message: "the file could not be processed")
            if error.code == "unsupported" {
                return ServeError(status: .unsupportedMediaType, code: error.code, message: error.message)
            }
            // Writing the output failed (a full spool, the file-size limit): the server's fault, not the file's.
            if Self.serverSideCodes.contains(error.code) {
                return ServeError(status: .serviceUnavailable, code: error.code, message: "the server could not write the cleaned file; retry later")
            }
            return ServeError(status: .unprocessableContent, code: error.code, message: error.message, offset: error.offset)
        case .clean, .cleaned, .findings:
            return nil
        }
    }

    static let serverSideCodes: Set<String> = ["io"]

    /// `location=9,device=3`: what was removed (or, for a scan, would be), by category, in category order.
    var removedSummary: String {
        var counts: [Category: Int] = [:]
        for finding in file.findings where finding.outcome == .removed || (report.command == .scan && finding.disposition != .keep) {
            counts[finding.item.category, default: 0] += 1
        }
        return Category.allCases.compactMap { category in counts[category].map { "\(category.rawValue)=\($0)" } }.joined(separator: ",")
    }
}
