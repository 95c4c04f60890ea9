// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import MetascrubCore

/// What the server needs from a worker's report to answer (status, headers, the fail-closed digest), written by
/// the worker beside the full report. The server reads only this, a few hundred bytes whatever the file: the full
/// report goes to the client as the worker wrote it, streamed from its file, never held or rewritten.
public struct WorkerSummary: Sendable, Codable, Equatable {
    public var command: Report.Command
    public var status: FileStatus
    /// `location=9,device=3`: removed (or, for a scan, to remove), by category, in category order.
    public var removed: String
    public var method: CleanMethod?
    public var format: String?
    public var policy: String
    public var reason: String?
    public var error: ErrorInfo?
    public var sha256Before: String?

    enum CodingKeys: String, CodingKey {
        case command, status, removed, method, format, policy, reason, error
        case sha256Before = "sha256_before"
    }

    /// The largest summary a server reads; anything longer is not a worker's summary.
    public static let maximumBytes = 64 << 10

    public init(_ report: Report) {
        let file = report.files[0]
        command = report.command
        status = file.status
        var counts: [MetascrubCore.Category: Int] = [:]
        let scan = report.command == .scan
        for finding in file.findings where finding.outcome == .removed || (scan && finding.disposition != .keep) {
            counts[finding.item.category, default: 0] += 1
        }
        removed = MetascrubCore.Category.allCases
            .compactMap { category in counts[category].map { "\(category.rawValue)=\($0)" } }
            .joined(separator: ",")
        method = file.method
        format = file.format
        policy = report.policy.name
        reason = file.reason
        error = file.error
        sha256Before = file.sha256Before
    }
}

extension Report {
    /// The report as a client of the server sees it: the input is `upload`, the output `cleaned`, and messages
    /// name no server path.
    func forClient(input: String, output: String?, folder: String) -> Report {
        func scrub(_ text: String) -> String {
            var text = text
            if let output { text = text.replacingOccurrences(of: output, with: "cleaned") }
            return text.replacingOccurrences(of: input, with: "upload").replacingOccurrences(of: folder, with: ".")
        }
        var report = self
        report.files = files.map { original in
            var file = original
            file.path = "upload"
            if file.output != nil { file.output = "cleaned" }
            if let message = file.error?.message { file.error?.message = scrub(message) }
            file.notes = file.notes.map { note in
                var note = note
                note.message = scrub(note.message)
                return note
            }
            return file
        }
        return report
    }
}
