// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import XCTest

/// One pipeline (issue 23): a file clean and `clean - --output -` take the same decide → clean → verify path, so
/// the same input and policy give the same bytes, whichever way they come in.
final class OnePipelineTests: XCTestCase {
    var tmp = ""

    override func setUp() { tmp = Harness.makeTemp("pipeline") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: tmp) }

    static let reencodePolicy = """
        schema: 1
        name: reencode-strict
        default: remove
        unknown: remove
        categories: { rendering: keep, structure: keep }
        orientation: bake
        reencode: true

        """

    /// A rotated JPEG whose size is not whole MCUs (no exact lossless turn), a rotated one that turns exactly, and
    /// an upright one, under `reencode: true`: byte-identical through both paths.
    func testFileAndStreamCleanWriteTheSameBytes() throws {
        let policy = tmp + "/reencode.yaml"
        try Self.reencodePolicy.write(toFile: policy, atomically: true, encoding: .utf8)
        for fixture in ["jpeg/orient-odd-6.jpg", "jpeg/orient-6.jpg", "jpeg/gps-full.jpg"] {
            let out = tmp + "/file-" + (fixture as NSString).lastPathComponent
            let file = Harness.metascrub(["clean", Harness.fixture(fixture), "--policy", policy, "--output", out, "--json"])
            XCTAssertEqual(file.status, 0, "\(fixture): \(file.out)")
            let input = try XCTUnwrap(Harness.data(Harness.fixture(fixture)))
            let stream = Harness.metascrub(["clean", "-", "--output", "-", "--policy", policy], input: input)
            XCTAssertEqual(stream.status, 0, "\(fixture): \(stream.stderr)")
            XCTAssertFalse(stream.stdout.isEmpty, fixture)
            XCTAssertEqual(stream.stdout, Harness.data(out), "\(fixture): the stream path wrote other bytes than the file path")
            if fixture == "jpeg/orient-odd-6.jpg" {
                let report = ((Harness.json(file.stdout)["files"] as? [[String: Any]])?.first) ?? [:]
                XCTAssertEqual(report["method"] as? String, "reencode", "the fixture must need the re-encode for this test to mean anything")
            }
            if fixture == "jpeg/orient-6.jpg" {
                // Whole MCUs, exact turn refused for rounding: the ladder's DCT-domain rung, on both paths.
                let report = ((Harness.json(file.stdout)["files"] as? [[String: Any]])?.first) ?? [:]
                XCTAssertEqual(report["method"] as? String, "lossless-transform", "\(fixture): the DCT-domain turn, not a re-encode")
            }
        }
    }

    /// A policy's `convert:` is honoured on standard input too, with the same bytes as the file path.
    func testStreamCleanHonoursConvert() throws {
        let policy = tmp + "/convert.yaml"
        try (Self.reencodePolicy + "convert: jpeg\n").write(toFile: policy, atomically: true, encoding: .utf8)
        let fixture = Harness.fixture("heic/exif-xmp.heic")
        let out = tmp + "/converted.jpg"
        let file = Harness.metascrub(["clean", fixture, "--policy", policy, "--output", out])
        XCTAssertEqual(file.status, 0, file.out + file.stderr)
        let stream = Harness.metascrub(["clean", "-", "--output", "-", "--policy", policy], input: try XCTUnwrap(Harness.data(fixture)))
        XCTAssertEqual(stream.status, 0, stream.stderr)
        XCTAssertEqual(Array(stream.stdout.prefix(2)), [0xFF, 0xD8], "a JPEG on standard output")
        XCTAssertEqual(stream.stdout, Harness.data(out))
    }
}
