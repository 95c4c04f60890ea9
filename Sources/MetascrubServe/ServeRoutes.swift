// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import HTTPTypes
import Hummingbird
import MetascrubCore
import MetascrubFormats
import NIOCore

/// The service's routes (docs/serve.md, docs/serve.openapi.yaml).
enum ServeRoutes {
    static func router(_ state: ServeState) -> Router<ServeRequestContext> {
        let router = Router(context: ServeRequestContext.self)
        router.get("healthz") { _, _ in json(["status": "ok"]) }
        router.get("readyz") { _, _ in
            guard state.ready else { return json(["status": "draining"], status: .serviceUnavailable) }
            // Workers are started per file: they are "down" when the binary they run is gone (an upgrade in place).
            guard FileManager.default.isExecutableFile(atPath: state.config.workerExecutable) else {
                return json(["status": "worker binary missing"], status: .serviceUnavailable)
            }
            return json(["status": "ready"])
        }
        let v1 = router.group("v1")
        if let token = state.config.token {
            v1.add(middleware: BearerTokenMiddleware(token: token, metrics: state.metrics))
        }
        v1.get("formats") { _, _ in json(formats()) }
        v1.get("policies") { _, _ in json(policies(default: state.config.policy)) }
        v1.post("clean") { request, context in try await state.handle(.clean, request, on: context.channel) }
        v1.post("scan") { request, context in try await state.handle(.scan, request, on: context.channel) }
        v1.post("check") { request, context in try await state.handle(.check, request, on: context.channel) }
        return router
    }

    static func metricsRouter(_ state: ServeState) -> Router<BasicRequestContext> {
        let router = Router()
        router.get("metrics") { _, _ in
            var headers = HTTPFields()
            headers[.contentType] = "text/plain; version=0.0.4"
            let text = state.metrics.text(state.admission.snapshot)
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: text)))
        }
        return router
    }

    static func json(_ object: Any, status: HTTPResponse.Status = .ok) -> Response {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .prettyPrinted])) ?? Data("{}".utf8)
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: data + Data("\n".utf8))))
    }

    /// The format table of `metascrub formats`, as data.
    static func formats() -> [[String: Any]] {
        FormatRegistry.entries.map { entry in
            var row: [String: Any] = [
                "id": entry.format.id, "name": entry.format.name, "clean": entry.handler != nil,
                "metadata": Dictionary(uniqueKeysWithValues: MetadataFamily.allCases.map { ($0.rawValue, entry.capabilities[$0].rawValue) }),
            ]
            if let reason = entry.unsupportedReason { row["unsupported"] = reason }
            return row
        }
    }

    static func policies(default name: String) -> [[String: Any]] {
        PolicyCatalog.names.compactMap { policyName in
            guard let policy = try? PolicyCatalog.builtin(policyName) else { return nil }
            return ["name": policyName, "description": policy.description, "default": policyName == name,
                    "digest": "sha256:" + policy.digest]
        }
    }
}

/// A request's context: Hummingbird's, and the connection it came on (a verified file is sent on it with sendfile).
struct ServeRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }
}

/// `Authorization: Bearer TOKEN` on every /v1 route; compared in constant time. A refusal is counted like any
/// answer (someone probing the API, or a client whose token was rotated, shows in the metrics).
struct BearerTokenMiddleware<Context: RequestContext>: RouterMiddleware {
    let token: String
    let metrics: ServeMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let header = request.headers[.authorization], header.hasPrefix("Bearer "),
              Self.equal(Array(header.utf8.dropFirst(7)), Array(token.utf8)) else {
            // The routes under /v1; anything else is `other` (a label per path would let clients grow it).
            let name = String(request.uri.path.split(separator: "/").last ?? "")
            let known = ["clean", "scan", "check", "formats", "policies"].contains(name)
            metrics.request(known ? name : "other", status: 401)
            return ServeError.unauthorized.response()
        }
        return try await next(request, context)
    }

    static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for (x, y) in zip(a, b) { difference |= x ^ y }
        return difference == 0
    }
}
