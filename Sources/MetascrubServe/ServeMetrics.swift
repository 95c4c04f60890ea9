// SPDX-License-Identifier: GPL-3.0-or-later
import Prometheus

/// The service's Prometheus metrics, served as text on the `--metrics` listener.
final class ServeMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    private let bytesIn: Counter
    private let bytesOut: Counter
    private let duration: DurationHistogram

    init() {
        bytesIn = registry.makeCounter(name: "metascrub_request_bytes_total", help: "Bytes of uploaded files spooled.")
        bytesOut = registry.makeCounter(name: "metascrub_response_bytes_total", help: "Bytes of cleaned files returned.")
        duration = registry.makeDurationHistogram(
            name: "metascrub_file_duration_seconds",
            buckets: [.milliseconds(10), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
                      .seconds(1), .seconds(5), .seconds(30), .seconds(120)],
            help: "Time from admission to the worker's report, per file.")
    }

    func received(_ bytes: Int64) { bytesIn.increment(by: bytes) }
    func returned(_ bytes: Int64) { bytesOut.increment(by: bytes) }
    func processed(in elapsed: Duration) { duration.record(elapsed) }

    func request(_ endpoint: String, status: Int) {
        registry.makeCounter(name: "metascrub_requests_total", labels: [("endpoint", endpoint), ("code", String(status))],
                             help: "Requests answered, by endpoint and HTTP status.").increment()
    }

    func worker(_ outcome: WorkerOutcome) {
        let result: String
        switch outcome {
        case .exited(0): result = "ok"
        case .exited: result = "failed"
        case .signalled: result = "killed"
        case .timedOut: result = "timeout"
        case .failedToStart: result = "spawn-failed"
        }
        registry.makeCounter(name: "metascrub_workers_total", labels: [("result", result)],
                             help: "Worker processes run, by how they ended.").increment()
    }

    /// The gauges, read from the admission state when scraped: never left at a stale value while idle.
    private func gauges(_ now: Admission.Snapshot) {
        registry.makeGauge(name: "metascrub_requests_admitted", help: "Requests admitted (uploading, queued or running).")
            .set(Double(now.uploading + now.queued + now.running))
        registry.makeGauge(name: "metascrub_uploads_in_progress", help: "Bodies being spooled now.").set(Double(now.uploading))
        registry.makeGauge(name: "metascrub_requests_queued", help: "Spooled files waiting for a worker.").set(Double(now.queued))
        registry.makeGauge(name: "metascrub_workers_running", help: "Worker processes running now.").set(Double(now.running))
    }

    func text(_ now: Admission.Snapshot) -> [UInt8] {
        gauges(now)
        return registry.emitToBuffer()
    }
}
