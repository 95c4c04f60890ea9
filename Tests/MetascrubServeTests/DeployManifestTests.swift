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

    func testKubernetesManifests() throws {
        let docs = try documents("deploy/kubernetes/metascrub.yaml")
        for doc in docs {
            XCTAssertNotNil(doc["apiVersion"] as? String)
            XCTAssertNotNil(value(doc, "metadata.name") as? String)
        }
        let kinds = docs.compactMap { $0["kind"] as? String }
        XCTAssertEqual(Set(kinds), ["Deployment", "Service", "HorizontalPodAutoscaler"])
        let deployment = try XCTUnwrap(docs.first { $0["kind"] as? String == "Deployment" })
        let selector = try XCTUnwrap(value(deployment, "spec.selector.matchLabels") as? [String: String])
        XCTAssertEqual(value(deployment, "spec.template.metadata.labels") as? [String: String], selector)
        let container = try XCTUnwrap(value(deployment, "spec.template.spec.containers.0") as? [String: Any])
        XCTAssertEqual(value(container, "readinessProbe.httpGet.path") as? String, "/readyz")
        XCTAssertEqual(value(container, "livenessProbe.httpGet.path") as? String, "/healthz")
        XCTAssertEqual(value(container, "securityContext.readOnlyRootFilesystem") as? Bool, true)
        XCTAssertEqual(value(container, "securityContext.allowPrivilegeEscalation") as? Bool, false)
        XCTAssertEqual(value(deployment, "spec.template.spec.securityContext.runAsNonRoot") as? Bool, true)
        XCTAssertEqual(value(container, "volumeMounts.0.mountPath") as? String, "/var/spool/metascrub")
        XCTAssertEqual(value(deployment, "spec.template.spec.volumes.0.emptyDir.medium") as? String, "Memory")
        // Limits match --workers.
        let args = try XCTUnwrap(container["args"] as? [String])
        let workers = try XCTUnwrap(args.firstIndex(of: "--workers").map { args[$0 + 1] })
        XCTAssertEqual(value(container, "resources.limits.cpu") as? String, workers)
        XCTAssertNotNil(value(container, "resources.limits.memory") as? String)
        // Draining: the grace period outlasts --timeout.
        let timeout = try XCTUnwrap(args.firstIndex(of: "--timeout").flatMap { Int(args[$0 + 1]) })
        XCTAssertGreaterThan(try XCTUnwrap(value(deployment, "spec.template.spec.terminationGracePeriodSeconds") as? Int), timeout)
        let ports = try XCTUnwrap(container["ports"] as? [[String: Any]]).compactMap { $0["containerPort"] as? Int }
        XCTAssertEqual(Set(ports), [8480, 9480])
        let service = try XCTUnwrap(docs.first { $0["kind"] as? String == "Service" })
        XCTAssertEqual(value(service, "spec.selector") as? [String: String], selector)
        let hpa = try XCTUnwrap(docs.first { $0["kind"] as? String == "HorizontalPodAutoscaler" })
        XCTAssertEqual(value(hpa, "spec.scaleTargetRef.name") as? String, value(deployment, "metadata.name") as? String)
        XCTAssertEqual(value(hpa, "spec.metrics.0.resource.name") as? String, "cpu")
    }

    func testKEDAScaledObject() throws {
        let docs = try documents("deploy/kubernetes/keda-backfill.yaml")
        XCTAssertEqual(docs.count, 1)
        XCTAssertEqual(docs[0]["apiVersion"] as? String, "keda.sh/v1alpha1")
        XCTAssertEqual(docs[0]["kind"] as? String, "ScaledObject")
        XCTAssertNotNil(value(docs[0], "spec.scaleTargetRef.name") as? String)
        XCTAssertNotNil(value(docs[0], "spec.triggers.0.type") as? String)
    }

    func testContainerfile() throws {
        let text = try String(contentsOf: repo.appendingPathComponent("deploy/Containerfile"), encoding: .utf8)
        XCTAssertTrue(text.contains("FROM docker.io/library/debian:12-slim"))
        XCTAssertTrue(text.contains("USER 10001"), "runs as root")
        XCTAssertTrue(text.contains("libseccomp2"))
        XCTAssertTrue(text.contains("EXPOSE 8480 9480"))
        XCTAssertFalse(text.contains("-dev ") && text.components(separatedBy: "FROM").last!.contains("-dev"), "build packages in the runtime image")
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
