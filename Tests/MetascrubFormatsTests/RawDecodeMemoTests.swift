// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubCore
@testable import MetascrubFormats
import XCTest

/// One clean decodes each distinct raw once (issue 24): `settle` decodes the original and the cleaned candidate,
/// and `clean`'s decodability check and the verification (original and output) reuse those decodes by digest
/// instead of running LibRaw again. Before `RawDecodeMemo`, a DNG clean ran five LibRaw unpacks.
final class RawDecodeMemoTests: XCTestCase {
    let dir = TempDir()

    /// `fixture` with 8 random bytes after its end (outside every IFD, so LibRaw and the scan read the same), so
    /// no earlier test in this process has decoded these bytes or their cleaned copy.
    func unique(_ fixture: String) throws -> String {
        var bytes = try Data(contentsOf: URL(fileURLWithPath: Fixture.path(fixture)))
        bytes.append(contentsOf: (0..<8).map { _ in UInt8.random(in: 0...255) })
        let path = dir.file("unique-" + (fixture as NSString).lastPathComponent)
        try bytes.write(to: URL(fileURLWithPath: path))
        return path
    }

    func testOneCleanDecodesTheOriginalAndTheOutputOnceEach() throws {
        let input = try unique("raw/adobe.dng")
        let before = RawDecodeMemo.decodes
        let report = Run.clean(input, to: dir.file("out.dng"))
        XCTAssertEqual(report.status, .cleaned, report.error?.message ?? "")
        XCTAssertEqual(report.verification?.contentResult, .passed)
        // The original, and the candidate without Make and Model that decodes the same (the output).
        XCTAssertEqual(RawDecodeMemo.decodes - before, 2, "LibRaw decodes in one clean of a DNG")
        // A second clean of the same bytes decodes nothing new, and still verifies.
        let again = RawDecodeMemo.decodes
        let second = Run.clean(input, to: dir.file("out2.dng"))
        XCTAssertEqual(second.verification?.contentResult, .passed)
        XCTAssertEqual(RawDecodeMemo.decodes - again, 0)
    }

    /// A byte changed in the output is a different digest: the verification decodes it instead of trusting the
    /// candidate's decode.
    func testAnOutputOtherThanTheCandidateIsDecodedAgain() throws {
        let input = try unique("raw/adobe.dng")
        let before = RawDecodeMemo.decodes
        let original = try RawDecodeMemo.fingerprint(bytes: Array(Data(contentsOf: URL(fileURLWithPath: input))))
        XCTAssertEqual(RawDecodeMemo.decodes - before, 1)
        XCTAssertEqual(try RawDecodeMemo.fingerprint(FileByteSource(path: input)), original)
        XCTAssertEqual(RawDecodeMemo.decodes - before, 1, "the same bytes through a file: a lookup")
        var changed = Array(try Data(contentsOf: URL(fileURLWithPath: input)))
        changed[changed.count - 1] ^= 0xFF
        XCTAssertEqual(try RawDecodeMemo.fingerprint(bytes: changed), original)
        XCTAssertEqual(RawDecodeMemo.decodes - before, 2, "other bytes: decoded")
    }
}
