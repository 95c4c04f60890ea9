// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Responses built from a worker's report: the audit summary in headers, the cleaned bytes streamed from the
/// verified file, the full report as JSON or as the first part of `multipart/mixed`.
enum CleanResponse {
    static let status = HTTPField.Name("Metascrub-Status")!
    static let removed = HTTPField.Name("Metascrub-Removed")!
    static let method = HTTPField.Name("Metascrub-Method")!
    static let policy = HTTPField.Name("Metascrub-Policy")!
    static let format = HTTPField.Name("Metascrub-Format")!

    static func summaryHeaders(_ result: WorkerResult) -> HTTPFields {
        var headers = HTTPFields()
        headers[status] = result.summary.status.rawValue
        headers[removed] = result.summary.removed
        if let value = result.summary.method { headers[method] = value.rawValue }
        if let value = result.summary.format { headers[format] = value }
        headers[policy] = result.summary.policy
        return headers
    }

    /// The report, streamed from the worker's file (the job asked for it).
    static func report(_ result: WorkerResult, _ report: OpenFile, status: HTTPResponse.Status,
                       on channel: any Channel) -> Response {
        var headers = summaryHeaders(result)
        headers[.contentType] = "application/json"
        headers[.contentLength] = String(report.size)
        let body = ResponseBody(contentLength: Int(report.size)) { writer in
            try await report.send(to: &writer, over: channel)
            try await writer.finish(nil)
        }
        return Response(status: status, headers: headers, body: body)
    }

    /// 200 with the cleaned bytes; with the report (the client asked for it), `multipart/mixed` with the report
    /// first and the bytes second, both streamed.
    static func make(_ result: WorkerResult, _ file: OpenFile, contentType: String?,
                     on channel: any Channel) -> Response {
        var headers = summaryHeaders(result)
        let type = contentType.flatMap { $0.isEmpty ? nil : $0 } ?? "application/octet-stream"
        guard let report = result.report else {
            headers[.contentType] = type
            headers[.contentLength] = String(file.size)
            return Response(status: .ok, headers: headers, body: ResponseBody(contentLength: Int(file.size)) { writer in
                try await file.send(to: &writer, over: channel)
                try await writer.finish(nil)
            })
        }
        let boundary = "metascrub-" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        let head = Data("--\(boundary)\r\nContent-Type: application/json\r\n\r\n".utf8)
        let middle = Data("\r\n--\(boundary)\r\nContent-Type: \(type)\r\nContent-Length: \(file.size)\r\n\r\n".utf8)
        let tail = Data("\r\n--\(boundary)--\r\n".utf8)
        headers[.contentType] = "multipart/mixed; boundary=\(boundary)"
        let length = head.count + Int(report.size) + middle.count + Int(file.size) + tail.count
        headers[.contentLength] = String(length)
        return Response(status: .ok, headers: headers, body: ResponseBody(contentLength: length) { writer in
            try await writer.write(ByteBuffer(bytes: head))
            try await report.send(to: &writer, over: channel)
            try await writer.write(ByteBuffer(bytes: middle))
            try await file.send(to: &writer, over: channel)
            try await writer.write(ByteBuffer(bytes: tail))
            try await writer.finish(nil)
        })
    }
}
