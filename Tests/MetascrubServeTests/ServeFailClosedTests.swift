// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import XCTest

/// `/v1/clean` fails closed: a worker that exits 0 without leaving its output gets the client a 5xx, never the
/// upload it sent.
final class ServeFailClosedTests: ServeTestCase {
    func testWorkerWithoutOutputNeverReturnsTheUpload() throws {
        let server = try start(environment: ["METASCRUB_WORKER_TEST_FAULT": "no-output"])
        for fixture in ["jpeg/gps-full.jpg", "jpeg/clean.jpg"] {
            let upload = try XCTUnwrap(FileManager.default.contents(atPath: ServeProcess.fixture(fixture)))
            let result = Curl.post(server.base + "/v1/clean", file: ServeProcess.fixture(fixture), scratch: scratch)
            XCTAssertEqual(result.status, 500, fixture + ": " + result.bodyText)
            XCTAssertTrue(result.bodyText.contains("worker-failed"), result.bodyText)
            XCTAssertNil(result.body.range(of: upload.prefix(4096)), "\(fixture): the upload came back")
            XCTAssertNil(result.body.range(of: Data("CANARY".utf8)), fixture)
        }
        XCTAssertEqual(server.spoolJobs, [])
    }

    /// A clean file whose copy went missing comes back only because the report's digest of the input is the
    /// upload's own (the client asked for the full report, so the worker hashed it).
    func testCleanFileComesBackOnlyWithAMatchingDigest() throws {
        let server = try start(environment: ["METASCRUB_WORKER_TEST_FAULT": "no-output"])
        let fixture = ServeProcess.fixture("jpeg/clean.jpg")
        let upload = try XCTUnwrap(FileManager.default.contents(atPath: fixture))
        let result = Curl.post(server.base + "/v1/clean?report=json", file: fixture, scratch: scratch)
        XCTAssertEqual(result.status, 200, result.bodyText)
        XCTAssertEqual(result.headers["metascrub-status"], "clean")
        XCTAssertNotNil(result.body.range(of: upload), "the verified upload is the second part")
    }
}
