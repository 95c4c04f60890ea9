// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import HTTPTypes
import Hummingbird

/// A request refused or failed, with the HTTP status and the JSON body (`{"error": code, "message": ...}`) a
/// client gets. Messages never carry metadata values or server paths.
struct ServeError: Error, Sendable {
    var status: HTTPResponse.Status
    var code: String
    var message: String
    var offset: Int64?
    var retryAfter: Int?

    static let full = ServeError(status: .tooManyRequests, code: "busy", message: "all workers and queue slots are in use; retry later", retryAfter: 1)

    static let slowUpload = ServeError(status: .requestTimeout, code: "slow-upload",
                                       message: "the body arrived more slowly than the server's minimum upload rate")

    static func tooLarge(_ limit: Int64) -> ServeError {
        ServeError(status: .contentTooLarge, code: "too-large", message: "the body is larger than the server's limit of \(limit) bytes")
    }

    static func badPolicy(_ name: String, shipped: [String]) -> ServeError {
        ServeError(status: .badRequest, code: "bad-policy", message: "no shipped policy named \(name.prefix(64)); shipped: \(shipped.joined(separator: ", "))")
    }

    static let unauthorized = ServeError(status: .unauthorized, code: "unauthorized", message: "a bearer token is required")

    func response() -> Response {
        var object: [String: Any] = ["error": code, "message": message]
        if let offset { object["offset"] = offset }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        // Every server-side failure may be retried; the client learns when.
        if let retry = retryAfter ?? (status == .serviceUnavailable ? 1 : nil) { headers[.retryAfter] = String(retry) }
        if status == .unauthorized { headers[.wwwAuthenticate] = "Bearer realm=\"metascrub\"" }
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: data + Data("\n".utf8))))
    }
}
