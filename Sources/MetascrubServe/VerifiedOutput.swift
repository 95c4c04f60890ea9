// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import MetascrubCore

/// What `/v1/clean` may stream, decided fail-closed: the worker's verified output when its report says
/// `cleaned` or `clean`, or the upload itself only when the report says `clean` and the digest it gives for the
/// input is the upload's. Anything else (a worker that exited 0 without an output, a report the server cannot
/// match to the bytes it holds) is a server fault: the client never gets its uncleaned upload back by accident.
enum VerifiedOutput {
    static func open(_ result: WorkerResult, job: SpoolJob) throws(ServeError) -> OpenFile {
        switch result.summary.status {
        case .cleaned, .clean:
            // A clean file is written as an unchanged copy, so both statuses normally have an output.
            if let output = OpenFile(regularFile: job.output, of: job) { return output }
        case .findings, .skipped, .error:
            throw missing("the worker reported \(result.summary.status.rawValue) for a clean")
        }
        guard result.summary.status == .clean, let claimed = result.summary.sha256Before,
              let upload = OpenFile(regularFile: job.input, of: job), upload.sha256() == claimed else {
            throw missing("the worker left no verified output")
        }
        return upload
    }

    private static func missing(_ message: String) -> ServeError {
        ServeError(status: .internalServerError, code: "worker-failed", message: message + "; nothing was returned")
    }
}
