// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import HTTPTypes
import Hummingbird
import MetascrubSandbox
import NIOCore

/// The three endpoints that take a file: spool the body, run one worker on it, answer from its report.
enum FileEndpoint: String, Sendable {
    /// The cleaned bytes (200), or why not (415, 422).
    case clean
    /// The JSON report, nothing written back.
    case scan
    /// 200 when nothing the policy removes is present, 422 otherwise (pict-rs `external_validation`).
    case check

    var workerMode: WorkerJob.Mode { self == .clean ? .clean : .scan }
}

extension ServeState {
    func handle(_ endpoint: FileEndpoint, _ request: Request, on channel: any Channel) async throws -> Response {
        let response: Response
        do {
            response = try await process(endpoint, request, on: channel)
        } catch let error as ServeError {
            response = error.response()
        }
        metrics.request(endpoint.rawValue, status: response.status.code)
        return response
    }

    private func process(_ endpoint: FileEndpoint, _ request: Request,
                         on channel: any Channel) async throws -> Response {
        let policy = try self.policy(named: request.uri.queryParameters["policy"])
        let declared = request.headers[.contentLength].flatMap { Int64($0) }
        if let declared, declared > config.maxBytes { throw ServeError.tooLarge(config.maxBytes) }
        // Refused before a byte is read when verified work is already queued to the limit.
        guard !admission.workQueueFull else { throw ServeError.full }
        // The clean endpoint answers from the summary unless the client asked for the report as well.
        let wantsReport = endpoint != .clean || request.uri.queryParameters["report"] == "json"
        // Framing makes Content-Length the body's exact length: a known small upload may go to memory, unless a
        // report (which can be many times the upload) is to be written too.
        let job = try memorySpool?.makeJob(uploadBytes: wantsReport ? nil : declared) ?? spool.makeJob()
        let pace = UploadPace(bytesPerSecond: config.minUploadRate, grace: .seconds(config.uploadGraceSeconds))
        let size = try await admission.whileUploading {
            try await job.receive(request.body, limit: config.maxBytes, pace: pace)
        }
        metrics.received(size)
        let started = ContinuousClock.now
        let work = launcher.job(endpoint.workerMode, job, policy: policy, inputBytes: size, report: wantsReport)
        let outcome = try await admission.withWorker { () async -> WorkerOutcome in
            await launcher.run(work, timeout: .seconds(config.timeoutSeconds))
        }
        metrics.worker(outcome)
        metrics.processed(in: ContinuousClock.now - started)
        if case .signalled(let signal) = outcome { logger.warning("worker killed by signal \(signal)") }
        let result = try WorkerResult.read(outcome, job: job, report: wantsReport,
                                           timeoutSeconds: config.timeoutSeconds)
        switch endpoint {
        case .clean:
            if let refusal = result.refusal { throw refusal }
            let file = try VerifiedOutput.open(result, job: job)
            metrics.returned(file.size)
            return CleanResponse.make(result, file, contentType: request.headers[.contentType], on: channel)
        case .scan:
            let status: HTTPResponse.Status = result.summary.status == .error ? .unprocessableContent : .ok
            return CleanResponse.report(result, try result.fullReport(), status: status, on: channel)
        case .check:
            if let refusal = result.refusal { throw refusal }
            let status: HTTPResponse.Status = result.summary.status == .clean ? .ok : .unprocessableContent
            return CleanResponse.report(result, try result.fullReport(), status: status, on: channel)
        }
    }
}
