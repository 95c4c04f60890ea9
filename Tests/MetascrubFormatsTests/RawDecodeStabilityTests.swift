// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubCore
@testable import MetascrubFormats
import XCTest

/// A category the policy removes is never kept for decoding's sake with exit 0: a DNG whose LibRaw decode depends
/// on its EXIF values (the raw IFD's height runs the read past the strip) is refused naming the fields, and its
/// scan never lists them as kept. A decode that is not reproducible makes no such verdict at all.
final class RawDecodeStabilityTests: XCTestCase {
    let dir = TempDir()
    static let fixture = "structure/rows-past-strip.dng"

    func testSensitiveFieldsADecodeDependsOnAreNeverKept() throws {
        let input = Fixture.path(Self.fixture)
        let scan = Run.scan(input)
        let kept = scan.findings.filter { $0.disposition == .keep && $0.reason == RawDecodeBisection.neededReason }
        for finding in kept {
            XCTAssertFalse([.location, .time, .identity].contains(finding.item.category) || finding.item.key.contains("Serial"),
                           "\(finding.item.key) is kept to decode the raw")
        }
        let named = scan.findings.filter { $0.reason == RawDecodeBisection.neededReason && $0.disposition != .keep }.map(\.item.key)
        XCTAssertTrue(named.contains("exif:CameraOwnerName"), "\(named)")
        for policy in ["strict", "share", "location"] {
            let output = dir.file("\(policy).dng")
            let report = Run.clean(input, to: output, policy: policy)
            if report.status == .error {
                let message = report.error?.message ?? ""
                XCTAssertTrue(message.contains("exif:") && message.contains("refused"), "\(policy): \(message)")
                XCTAssertFalse(FileManager.default.fileExists(atPath: output), "\(policy): written although refused")
            } else {
                // Cleaned: then nothing identifying that the policy removes is left (ExifTool).
                XCTAssertEqual(report.status, .cleaned, "\(policy): \(report.status)")
                XCTAssertFalse(Oracle.contains(output, "CANARY-CAMERA-OWNER"), "\(policy): the owner is left")
            }
        }
        XCTAssertEqual(Run.clean(input, to: dir.file("strict-again.dng")).status, .error, "strict must refuse")
    }

    /// LibRaw decodes the Adobe-style DNG the same twice and with bytes appended; the verdict is remembered, and
    /// bytes never asked about have none.
    func testReproducibleDecodesAreToldFromOthers() throws {
        let adobe = try XCTUnwrap(FileManager.default.contents(atPath: Fixture.path("raw/adobe.dng")))
        XCTAssertTrue(RawDecodeStability.reproducible(bytes: Array(adobe)))
        XCTAssertEqual(try RawDecodeStability.known(MemoryByteSource(Array(adobe))), true)
        XCTAssertNil(try RawDecodeStability.known(MemoryByteSource(Array(adobe.dropLast()))), "asked without being asked")
    }
}
