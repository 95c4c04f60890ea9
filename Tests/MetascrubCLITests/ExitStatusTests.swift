// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import XCTest

/// Exit statuses a CI gate can trust: a report that could not be written is its own failure with the reason;
/// documents that carry metadata metascrub cannot read are never waved through; an empty file gets one answer.
final class ExitStatusTests: XCTestCase {
    var tmp: String!

    override func setUpWithError() throws {
        try Harness.requireBinary()
        tmp = Harness.makeTemp("exit")
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: tmp) }

    static let documents = [
                            "unchecked/author.docx": "Office Open XML", "unchecked/author.odt": "OpenDocument",
                            "unchecked/book.epub": "EPUB"]

    func testAReportThatCannotBeWrittenExits4WithTheReason() {
        let input = Harness.fixture("jpeg/gps-full.jpg")
        let viaShell = Harness.exec("/bin/sh", ["-c", "exec \"$0\" scan \"$1\" --json > /dev/full", Harness.binary, input], cwd: tmp)
        XCTAssertEqual(viaShell.status, 4, viaShell.stderr)
        XCTAssertTrue(viaShell.stderr.contains("No space left on device"), viaShell.stderr)

        let badPath = Harness.metascrub(["scan", input, "-q", "--report", "\(tmp!)/no/such/folder/r.json"])
        XCTAssertEqual(badPath.status, 4, badPath.stderr)
        XCTAssertTrue(badPath.stderr.contains("No such file or directory"), badPath.stderr)

        let clean = Harness.metascrub(["clean", input, "--output", "\(tmp!)/out.jpg", "-q", "--report", "\(tmp!)/missing/r.sarif"])
        XCTAssertEqual(clean.status, 4, clean.stderr)
    }

    func testReportFormatFromTheExtensionIgnoresCaseAndConflictingFlagsAreAUsageError() throws {
        let input = Harness.fixture("jpeg/gps-full.jpg")
        let upper = Harness.metascrub(["scan", input, "-q", "--report", "\(tmp!)/r.JSON"])
        XCTAssertEqual(upper.status, 1, upper.stderr)
        let report = try XCTUnwrap(Harness.data("\(tmp!)/r.JSON"))
        XCTAssertNotNil(try? JSONSerialization.jsonObject(with: report), "r.JSON holds JSON")
        let conflict = Harness.metascrub(["scan", input, "--json", "--format", "sarif"])
        XCTAssertEqual(conflict.status, 2, conflict.stderr)
        XCTAssertEqual(Harness.metascrub(["scan", input, "--json", "--format", "json", "-q"]).status, 1)
    }

    func testDocumentsThatMayCarryMetadataAreNotCheckedAndFailTheRun() throws {
        let src = "\(tmp!)/src"
        for name in Self.documents.keys { Harness.copy(name, to: "\(src)/\((name as NSString).lastPathComponent)") }
        Harness.copy("jpeg/gps-full.jpg", to: "\(src)/photo.jpg")
        let scan = Harness.metascrub(["scan", src])
        XCTAssertEqual(scan.status, 3, scan.stderr)
        for format in Self.documents.values {
            XCTAssertTrue(scan.out.contains("not checked: \(format) is not supported"), "\(format): \(scan.out)")
        }
        let one = Harness.metascrub(["scan", Harness.fixture("unchecked/author.docx")])
        XCTAssertEqual(one.status, 3, one.out)

        // A publish folder does not get them unless asked; the photo is still cleaned.
        let out = Harness.metascrub(["clean", src, "--output-dir", "\(tmp!)/dist", "-q"])
        XCTAssertEqual(out.status, 3, out.stderr)
        XCTAssertTrue(Harness.exists("\(tmp!)/dist/photo.jpg"))
        for name in Self.documents.keys {
            XCTAssertFalse(Harness.exists("\(tmp!)/dist/\((name as NSString).lastPathComponent)"), "\(name) was published")
        }
        let copied = Harness.metascrub(["clean", src, "--output-dir", "\(tmp!)/dist2", "--copy-unsupported", "--json"])
        XCTAssertEqual(copied.status, 0, copied.stderr)
        XCTAssertTrue(copied.out.contains("not-checked"), "a warning says they were not checked")
        for name in Self.documents.keys {
            let base = (name as NSString).lastPathComponent
            XCTAssertEqual(Harness.data("\(tmp!)/dist2/\(base)"), Harness.data(Harness.fixture(name)), base)
        }
        // A plain zip or text file is not a document metascrub worries about: copied as before.
        _ = FileManager.default.createFile(atPath: "\(src)/notes.txt", contents: Data("hello\n".utf8))
        XCTAssertEqual(Harness.metascrub(["scan", "\(src)/notes.txt"]).status, 0)
    }

    func testAnEmptyFileGetsTheSameAnswerEverywhere() {
        let empty = "\(tmp!)/empty.jpg"
        _ = FileManager.default.createFile(atPath: empty, contents: Data())
        let scan = Harness.metascrub(["scan", empty])
        let output = Harness.metascrub(["clean", empty, "--output", "\(tmp!)/out.jpg"])
        let inPlace = Harness.metascrub(["clean", empty, "--in-place"])
        XCTAssertEqual(scan.status, 3, scan.out + scan.stderr)
        XCTAssertEqual(output.status, 3, output.out + output.stderr)
        XCTAssertEqual(inPlace.status, 3, inPlace.out + inPlace.stderr)
        XCTAssertFalse(Harness.exists("\(tmp!)/out.jpg"), "nothing written")
        XCTAssertEqual(Harness.data(empty), Data())
        for result in [scan, output, inPlace] { XCTAssertTrue(result.out.contains("is empty (0 bytes)"), result.out) }
        // An empty file that does not claim to be media is not an error.
        _ = FileManager.default.createFile(atPath: "\(tmp!)/.gitkeep", contents: Data())
        XCTAssertEqual(Harness.metascrub(["scan", "\(tmp!)/.gitkeep"]).status, 0)
    }
}
