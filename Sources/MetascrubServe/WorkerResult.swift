// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import MetascrubCore
import MetascrubSandbox

/// A worker's answer: its small summary, read and decoded, and its full report, opened but never read into the
/// server (the worker wrote it as the client sees it, `upload` as its path). The server's memory does not grow
/// with the report.
struct WorkerResult: Sendable {
    var summary: WorkerSummary
    /// The full report, when the job asked for one.
    var report: OpenFile?

    /// Reads the summary a worker left and opens its report, or turns how it ended into the error the client gets.
    static func read(_ outcome: WorkerOutcome, job: SpoolJob, report wanted: Bool,
                     timeoutSeconds: Int) throws(ServeError) -> WorkerResult {
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
        guard let file = OpenFile(regularFile: job.summary), file.size <= WorkerSummary.maximumBytes,
              let data = file.read(), let summary = try? JSONDecoder().decode(WorkerSummary.self, from: data) else {
            throw unreadable
        }
        let report = wanted ? OpenFile(regularFile: job.report, of: job) : nil
        guard report != nil || !wanted else { throw unreadable }
        return WorkerResult(summary: summary, report: report)
    }

    /// The report of a job that asked for one (`read` made sure it is there).
    func fullReport() throws(ServeError) -> OpenFile {
        guard let report else { throw Self.unreadable }
        return report
    }

    private static let unreadable = ServeError(status: .serviceUnavailable, code: "worker-failed",
                                               message: "the worker's report could not be read")

    /// 415 for a file that is not media or a format without a cleaner; 422 for one that cannot be read,
    /// cleaned or verified; 503 when writing the output failed. nil: the file was handled.
    var refusal: ServeError? {
        switch summary.status {
        case .skipped:
            return ServeError(status: .unsupportedMediaType, code: "unsupported",
                              message: summary.reason.map { "not a format metascrub can clean (\($0))" } ?? "not a format metascrub can clean")
        case .error:
            let error = summary.error ?? ErrorInfo(code: "error", message: "the file could not be processed")
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
}
