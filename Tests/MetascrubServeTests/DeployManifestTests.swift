// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import XCTest
import Yams

/// deploy/ and docs/serve.openapi.yaml, checked offline (no cluster, no container engine here): every document
/// parses, and the fields the service relies on are there and agree with each other and with the server.
final class DeployManifestTests: XCTestCase {
    let repo = ServeProcess.repo

    func documents(_ path: String) throws -> [[String: Any]] {
        let text = try String(contentsOf: repo.appendingPathComponent(path), encoding: .utf8)
        return try Yams.load_all(yaml: text).map { try XCTUnwrap($0 as? [String: Any], "\(path): a document is not a mapping") }
    }

    func value(_ object: Any?, _ path: String) -> Any? {
        path.split(separator: ".").reduce(object) { current, key in
            if let index = Int(key), let list = current as? [Any] { return index < list.count ? list[index] : nil }
            return (current as? [String: Any])?[String(key)]
        }
    }

    /// `512M` (the server's sizes) or `14Gi` (Kubernetes quantities), in bytes.
    func bytes(_ text: String?) -> Int64? {
        guard var digits = text else { return nil }
        if digits.hasSuffix("i") { digits.removeLast() }
        let units: [String: Int64] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40]
        let scale = units[digits.last.map(String.init) ?? ""] ?? 1
        if scale != 1 { digits.removeLast() }
        return Int64(digits).map { $0 * scale }
    }

    func args(_ container: [String: Any]) throws -> [String: String] {
        let list = try XCTUnwrap(container["args"] as? [String])
        let pairs = stride(from: 0, to: list.count - 1, by: 2).map { (list[$0], list[$0 + 1]) }
        return Dictionary(pairs) { first, _ in first }
    }

    func testKubernetesManifests() throws {
        let docs = try documents("deploy/kubernetes/metascrub.yaml")
        for doc in docs {
            XCTAssertNotNil(doc["apiVersion"] as? String)
            XCTAssertNotNil(value(doc, "metadata.name") as? String)
        }
        // Only kinds podman kube play runs: the others live in their own files.
        XCTAssertEqual(Set(docs.compactMap { $0["kind"] as? String }), ["Deployment", "Service"])
        let deployment = try XCTUnwrap(docs.first { $0["kind"] as? String == "Deployment" })
        let selector = try XCTUnwrap(value(deployment, "spec.selector.matchLabels") as? [String: String])
        XCTAssertEqual(value(deployment, "spec.template.metadata.labels") as? [String: String], selector)
        let pod = try XCTUnwrap(value(deployment, "spec.template.spec") as? [String: Any])
        let container = try XCTUnwrap(value(pod, "containers.0") as? [String: Any])
        let image = try XCTUnwrap(container["image"] as? String)
        XCTAssertNotNil(image.range(of: "@sha256:[0-9a-f]{64}$", options: .regularExpression), "not pinned by digest")
        XCTAssertEqual(value(container, "readinessProbe.httpGet.path") as? String, "/readyz")
        XCTAssertEqual(value(container, "livenessProbe.httpGet.path") as? String, "/healthz")
        XCTAssertEqual(value(container, "securityContext.readOnlyRootFilesystem") as? Bool, true)
        XCTAssertEqual(value(container, "securityContext.allowPrivilegeEscalation") as? Bool, false)
        XCTAssertEqual(value(pod, "securityContext.runAsNonRoot") as? Bool, true)
        XCTAssertEqual(value(container, "securityContext.runAsUser") as? Int, 10001)
        let options = try args(container)
        // Limits match --workers.
        XCTAssertEqual(value(container, "resources.limits.cpu") as? String, options["--workers"])
        XCTAssertNotNil(value(container, "resources.limits.memory") as? String)
        // Draining: preStop waits as long as the server's drain grace; the grace period outlasts both and --timeout.
        let drain = try XCTUnwrap(options["--drain-grace"].flatMap { Int($0) })
        let timeout = try XCTUnwrap(options["--timeout"].flatMap { Int($0) })
        XCTAssertEqual(value(container, "lifecycle.preStop.exec.command") as? [String], ["/bin/sleep", String(drain)])
        let grace = try XCTUnwrap(value(pod, "terminationGracePeriodSeconds") as? Int)
        XCTAssertGreaterThan(grace, drain + drain + timeout)
        // The spool holds every file the server may have at once.
        let mounts = try XCTUnwrap(container["volumeMounts"] as? [[String: Any]])
        let volumes = try XCTUnwrap(pod["volumes"] as? [[String: Any]])
        func volume(mountedAt path: String) throws -> [String: Any] {
            let name = try XCTUnwrap(mounts.first { $0["mountPath"] as? String == path }?["name"] as? String, path)
            return try XCTUnwrap(volumes.first { $0["name"] as? String == name }, name)
        }
        let spool = try volume(mountedAt: "/var/spool/metascrub")
        XCTAssertNil(value(spool, "emptyDir.medium"), "an in-memory spool of this size counts against the memory limit")
        func count(_ option: String) throws -> Int64 { try XCTUnwrap(options[option].flatMap { Int64($0) }, option) }
        let maxBytes = try XCTUnwrap(bytes(options["--max-bytes"]))
        let files = try count("--upload-slots") + count("--queue") + 2 * count("--workers")
        let sizeLimit = try XCTUnwrap(bytes(value(spool, "emptyDir.sizeLimit") as? String))
        XCTAssertGreaterThanOrEqual(sizeLimit, files * maxBytes)
        // The token comes from a Secret mounted where --token-file reads it.
        let tokenFile = try XCTUnwrap(options["--token-file"])
        let secret = try volume(mountedAt: (tokenFile as NSString).deletingLastPathComponent)
        XCTAssertNotNil(value(secret, "secret.secretName") as? String)
        let ports = try XCTUnwrap(container["ports"] as? [[String: Any]]).compactMap { $0["containerPort"] as? Int }
        XCTAssertEqual(Set(ports), [8480, 9480])
        let service = try XCTUnwrap(docs.first { $0["kind"] as? String == "Service" })
        XCTAssertEqual(value(service, "spec.selector") as? [String: String], selector)
    }

    func testNetworkPolicyAllowsLabelledClientsOnlyAndNoEgress() throws {
        let docs = try documents("deploy/kubernetes/network-policy.yaml")
        XCTAssertEqual(docs.count, 1)
        XCTAssertEqual(docs[0]["kind"] as? String, "NetworkPolicy")
        XCTAssertEqual(value(docs[0], "spec.podSelector.matchLabels") as? [String: String],
                       ["app.kubernetes.io/name": "metascrub"])
        XCTAssertEqual(Set(try XCTUnwrap(value(docs[0], "spec.policyTypes") as? [String])), ["Ingress", "Egress"])
        XCTAssertEqual((value(docs[0], "spec.egress") as? [Any])?.count, 0)
        let api = try XCTUnwrap((value(docs[0], "spec.ingress") as? [[String: Any]])?.first { rule in
            (value(rule, "ports.0.port") as? Int) == 8480
        })
        XCTAssertNotNil(value(api, "from.0.podSelector.matchLabels") as? [String: String], "the API open to every pod")
    }

    /// Scaling sees queueing and 429s through metrics the server really exports.
    func testAutoscalingUsesTheServersQueueMetrics() throws {
        let docs = try documents("deploy/kubernetes/autoscaling.yaml")
        XCTAssertEqual(docs.count, 1)
        XCTAssertEqual(docs[0]["apiVersion"] as? String, "keda.sh/v1alpha1")
        XCTAssertEqual(docs[0]["kind"] as? String, "ScaledObject")
        XCTAssertEqual(value(docs[0], "spec.scaleTargetRef.name") as? String, "metascrub")
        let metrics = repo.appendingPathComponent("Sources/MetascrubServe/ServeMetrics.swift")
        let source = try String(contentsOf: metrics, encoding: .utf8)
        let queries = try XCTUnwrap(value(docs[0], "spec.triggers") as? [[String: Any]])
            .filter { $0["type"] as? String == "prometheus" }.compactMap { value($0, "metadata.query") as? String }
        XCTAssertTrue(queries.contains { $0.contains("metascrub_requests_queued") })
        XCTAssertTrue(queries.contains { $0.contains("code=\"429\"") })
        for query in queries {
            for name in query.matches(of: /metascrub_[a-z_]+/).map({ String($0.output) }) {
                XCTAssertTrue(source.contains("\"\(name)\""), "\(name) is not a metric the server exports")
            }
        }
    }

    func testKEDABackfill() throws {
        let docs = try documents("deploy/kubernetes/keda-backfill.yaml")
        XCTAssertEqual(docs.count, 1)
        XCTAssertEqual(docs[0]["apiVersion"] as? String, "keda.sh/v1alpha1")
        XCTAssertEqual(docs[0]["kind"] as? String, "ScaledObject")
        XCTAssertNotNil(value(docs[0], "spec.scaleTargetRef.name") as? String)
        XCTAssertNotNil(value(docs[0], "spec.triggers.0.type") as? String)
    }

    func testContainerfile() throws {
        let text = try String(contentsOf: repo.appendingPathComponent("deploy/Containerfile"), encoding: .utf8)
        XCTAssertTrue(text.contains("USER 10001"), "runs as root")
        XCTAssertTrue(text.contains("EXPOSE 8480 9480"))
        XCTAssertTrue(text.contains("VOLUME [\"/var/spool/metascrub\"]"))
        let packages = try String(contentsOf: repo.appendingPathComponent("deploy/runtime-packages"), encoding: .utf8)
            .split(separator: "\n").filter { !$0.hasPrefix("#") }
        XCTAssertTrue(packages.contains("libseccomp2"))
        XCTAssertFalse(packages.contains { $0.hasSuffix("-dev") }, "build packages in the runtime image")
    }

    /// The OpenAPI file parses, and documents exactly the routes the server answers.
    func testOpenAPIDocumentsEveryRoute() throws {
        let spec = try XCTUnwrap(try documents("docs/serve.openapi.yaml").first)
        XCTAssertEqual(spec["openapi"] as? String, "3.0.3")
        let paths = try XCTUnwrap(spec["paths"] as? [String: Any])
        XCTAssertEqual(Set(paths.keys), ["/v1/clean", "/v1/scan", "/v1/check", "/v1/formats", "/v1/policies", "/healthz", "/readyz"])
        for status in ["200", "400", "401", "413", "415", "422", "429", "503"] {
            XCTAssertNotNil(value(paths, "/v1/clean.post.responses.\(status)"), "clean: \(status) undocumented")
        }
    }
}
