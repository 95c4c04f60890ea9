// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubCore
import XCTest

/// PDF through QPDF: the fixture's planted values (Info, XMP, an older author in every earlier revision, a
/// thumbnail, /PieceInfo, an opening URI, the /ID, an attached photo with GPS) are searched for after a clean in
/// the raw file and in every stream decompressed by the qpdf tool, as ASCII and as UTF-16BE, plain or hex; poppler
/// renders every page and extracts the text before and after.
final class PDFTests: XCTestCase {
    let dir = TempDir()
    static let fixture = "pdf/report.pdf"
    /// Held only by earlier revisions (incremental updates) or by the first revision's compressed object
    /// stream: a fresh write drops them under every policy.
    static let earlier = [
        "CANARY-PDF-AUTHOR-0", "CANARY-PDF-AUTHOR-1", "CANARY-PDF-AUTHOR-ACROBAT", "CANARY-PDF-XMP-CREATOR-1",
        "CANARY-PDF-XMP-PRODUCER-1", "CANARY-PDF-COMPANY", "CANARY-PDF-SUBJECT-UTF16", "LibreOffice",
    ]
    /// In the last revision, by what the policies decide about them.
    static let identity = ["CANARY-PDF-AUTHOR-2", "CANARY-PDF-XMP-CREATOR-2", "CANARY-PDF-ID001"]
    static let software = ["CANARY-PDF-XMP-PRODUCER-2", "CANARY-PDF-TOOL", "CANARY-PDF-PIECEINFO", "Acrobat"]
    static let others = ["CANARY-CITY", "CANARY-PDF-TRACKER", "CANARY-PDF-THUMB"]

    func testStrictCleanLeavesNoPlantedValueAndTheSamePages() throws {
        try Tool.require("qpdf", "pdftoppm", "pdftotext", "pdfdetach", "exiftool")
        let input = Fixture.path(Self.fixture)
        let all = Self.earlier + Self.identity + Self.software + Self.others + ["CANARY-PDF-ATTACHED-ARTIST", "IMG_0042"]
        XCTAssertEqual(Self.present(input, all), all, "the fixture no longer holds every planted value")
        let output = dir.file("strict.pdf")
        let report = Run.clean(input, to: output)
        XCTAssertEqual(report.status, .cleaned, "\(report.error.map { "\($0)" } ?? "")")
        XCTAssertEqual(report.method, .remux)
        XCTAssertEqual(report.verification?.contentResult, .passed)
        XCTAssertEqual(Self.present(output, all), [])
        try assertSamePages(input, output)
        XCTAssertEqual(Self.attachments(output), [], "the attached photo stays under strict")
        assertOneRevision(output)
    }

    func testSharePolicyKeepsAuthorsAndTheAttachedPhotoCleaned() throws {
        try Tool.require("qpdf", "pdftoppm", "pdftotext", "pdfdetach", "exiftool")
        let input = Fixture.path(Self.fixture)
        let output = dir.file("share.pdf")
        let report = Run.clean(input, to: output, policy: "share")
        XCTAssertEqual(report.status, .cleaned, "\(report.error.map { "\($0)" } ?? "")")
        XCTAssertEqual(Self.present(output, Self.earlier + Self.software + Self.others + ["CANARY-PDF-ID001"]), [])
        XCTAssertEqual(Self.present(output, ["CANARY-PDF-AUTHOR-2", "CANARY-PDF-XMP-CREATOR-2"]),
                       ["CANARY-PDF-AUTHOR-2", "CANARY-PDF-XMP-CREATOR-2"], "share keeps who wrote the document")
        try assertSamePages(input, output)
        let attached = Self.attachments(output)
        XCTAssertEqual(attached.map { ($0 as NSString).lastPathComponent }, ["IMG_0042.jpg"])
        if let photo = attached.first {
            let tags = Oracle.exiftool(photo)
            XCTAssertNil(tags["GPS:GPSLatitude"], "the attached photo's position")
            XCTAssertNil(tags["IFD0:Make"])
            XCTAssertEqual(tags["IFD0:Artist"] as? String, "CANARY-PDF-ATTACHED-ARTIST", "share keeps the photo's author")
            XCTAssertNotNil(Oracle.pixels(photo, autoOrient: false))
        }
        assertOneRevision(output)
    }

    func testLocationPolicyDropsPositionsAndEveryEarlierRevision() throws {
        try Tool.require("qpdf", "pdftoppm", "pdftotext", "pdfdetach", "exiftool")
        let input = Fixture.path(Self.fixture)
        let output = dir.file("location.pdf")
        let report = Run.clean(input, to: output, policy: "location")
        XCTAssertEqual(report.status, .cleaned, "\(report.error.map { "\($0)" } ?? "")")
        XCTAssertEqual(Self.present(output, Self.earlier + ["CANARY-CITY", "CANARY-PDF-THUMB"]), [])
        XCTAssertEqual(Self.present(output, ["CANARY-PDF-AUTHOR-2", "CANARY-PDF-TOOL"]), ["CANARY-PDF-AUTHOR-2", "CANARY-PDF-TOOL"])
        try assertSamePages(input, output)
        let attached = Self.attachments(output)
        XCTAssertEqual(attached.count, 1)
        if let photo = attached.first { XCTAssertNil(Oracle.exiftool(photo)["GPS:GPSLatitude"]) }
        assertOneRevision(output)
    }

    func testAFileAttachedToAnAnnotationIsCleanedWithItsReviewerRemoved() throws {
        try Tool.require("qpdf", "pdftoppm", "pdftotext", "pdfdetach", "exiftool")
        let input = Fixture.path("pdf/annotated.pdf")
        let planted = ["CANARY-PDF-REVIEWER", "CANARY-PDF-AUTHOR-0", "CANARY-PDF-PIECEINFO", "CANARY-PDF-TRACKER",
                       "CANARY-PDF-IMAGE-CITY"]
        XCTAssertEqual(Self.present(input, planted + ["CANARY-PDF-IMAGE-CREATOR"]), planted + ["CANARY-PDF-IMAGE-CREATOR"])
        for policy in ["strict", "share"] {
            let output = dir.file("annotated-\(policy).pdf")
            let report = Run.clean(input, to: output, policy: policy)
            XCTAssertEqual(report.status, .cleaned, "\(policy): \(report.error.map { "\($0)" } ?? "")")
            // The placed image's own XMP is read like the catalog's: share keeps its creator, not its city.
            XCTAssertEqual(Self.present(output, planted + ["CANARY-PDF-ATTACHED-ARTIST", "CANARY-PDF-IMAGE-CREATOR"]),
                           policy == "share" ? ["CANARY-PDF-AUTHOR-0", "CANARY-PDF-ATTACHED-ARTIST", "CANARY-PDF-IMAGE-CREATOR"] : [],
                           "\(policy): share keeps the document's and the photo's authors, not the reviewer's name")
            // The push pin stays where it was: only what it holds changed.
            try assertSamePages(input, output)
            let saved = Self.attachments(output).filter { (try? FileManager.default.attributesOfItem(atPath: $0)[.size] as? Int) ?? 0 > 0 }
            if policy == "share" {
                XCTAssertEqual(saved.count, 1, "the photo stays, cleaned")
                if let photo = saved.first { XCTAssertNil(Oracle.exiftool(photo)["GPS:GPSLatitude"]) }
            } else {
                XCTAssertEqual(saved, [], "strict removes the photo")
            }
        }
    }

    func testScanListsWhatTheDocumentCarries() {
        let keys = Set(Run.scan(Fixture.path(Self.fixture)).findings.map(\.item.key))
        for key in ["pdf:Info/Author", "pdf:Info/Producer", "pdf:ID", "xmp:dc:creator", "xmp:photoshop:City", "pdf:PieceInfo",
                    "pdf:Thumb", "pdf:OpenAction", "pdf:EmbeddedFile", "pdf:LastModified"] {
            XCTAssertTrue(keys.contains(key), "\(key) not found in \(keys.sorted())")
        }
        XCTAssertTrue(keys.contains { $0.hasPrefix("exif:") && $0.contains("GPS") }, "the attached photo's GPS: \(keys.sorted())")
    }

    /// An application's /PieceInfo points at private objects nobody reads (here one holds a user's path): a policy
    /// that keeps the software category but removes identity must not keep them under that name.
    func testPieceInfoIsNotKeptUnread() throws {
        var policy = Run.policy("location")
        policy.categories[.identity] = .remove
        policy.categories[.content] = .remove
        let output = dir.file("software-kept.pdf")
        XCTAssertEqual(Run.clean(Fixture.path("pdf/annotated.pdf"), to: output, policy: policy).status, .cleaned)
        let bytes = try XCTUnwrap(FileManager.default.contents(atPath: output))
        XCTAssertNil(bytes.range(of: Data("/home/".utf8)), "a user's path stayed inside /PieceInfo's private data")
    }

    func testCleanIsAFixedPoint() throws {
        for policy in ["strict", "share", "location"] {
            let first = dir.file("first-\(policy).pdf"), second = dir.file("second-\(policy).pdf")
            XCTAssertEqual(Run.clean(Fixture.path(Self.fixture), to: first, policy: policy).status, .cleaned, policy)
            let scan = Run.scan(first, policy: policy)
            XCTAssertEqual(scan.status, .clean, "\(policy): \(scan.findings.filter { $0.disposition != .keep }.map(\.item.key))")
            let again = Run.clean(first, to: second, policy: policy)
            XCTAssertEqual(again.status, .clean, policy)
            if FileManager.default.fileExists(atPath: second) {
                XCTAssertEqual(FileManager.default.contents(atPath: first), FileManager.default.contents(atPath: second), policy)
            }
        }
        // The CLI's answer for the cleaned file: nothing to report.
        let cleaned = dir.file("first-strict.pdf")
        XCTAssertEqual(Tool.run(["qpdf", "--check", cleaned]).status, 0, "qpdf finds the output damaged")
    }

    func testDamagedDocumentsGetATypedErrorNeverACrash() {
        let garbage = dir.file("garbage.pdf")
        let bytes = Data("%PDF-1.7\n1 0 obj << /Type /Catalog".utf8) + Data(repeating: 0x41, count: 300)
        FileManager.default.createFile(atPath: garbage, contents: bytes)
        let report = Run.clean(garbage, to: dir.file("garbage-out.pdf"))
        XCTAssertEqual(report.status, .error)
        XCTAssertEqual(report.error?.code, "malformed", report.error?.message ?? "")
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.file("garbage-out.pdf")))
        ContainerChecks.assertRobust(Self.fixture, in: dir)
    }

    func testADocumentQPDFRepairsIsCleanedWithANoteOrRefused() throws {
        try Tool.require("qpdf", "pdftotext")
        // The cross-reference table is not where startxref says: QPDF rebuilds it from the objects it finds.
        var bytes = [UInt8](FileManager.default.contents(atPath: Fixture.path("pdf/annotated.pdf"))!)
        let start = Array("startxref".utf8)
        let at = (0...(bytes.count - start.count)).last { bytes[$0..<($0 + start.count)].elementsEqual(start) }!
        bytes = Array(bytes[..<at]) + Array("startxref\n1234\n%%EOF\n".utf8)
        let cut = dir.file("cut.pdf")
        FileManager.default.createFile(atPath: cut, contents: Data(bytes))
        let output = dir.file("cut-clean.pdf")
        let report = Run.clean(cut, to: output)
        XCTAssertEqual(report.status, .cleaned, "\(report.error.map { "\($0)" } ?? "")")
        XCTAssertTrue(report.notes.contains { $0.code == "damaged-input" }, "\(report.notes.map(\.code))")
        let planted = ["CANARY-PDF-REVIEWER", "CANARY-PDF-AUTHOR-0", "CANARY-PDF-PIECEINFO", "CANARY-PDF-ATTACHED-ARTIST"]
        XCTAssertEqual(Self.present(output, planted), [])
        XCTAssertEqual(Tool.run(["qpdf", "--check", output]).status, 0, "the output is sound")
        var refuse = Run.policy("strict")
        refuse.damaged = .refuse
        let refused = Run.clean(cut, to: dir.file("cut-refused.pdf"), policy: refuse)
        XCTAssertEqual(refused.status, .error)
        XCTAssertEqual(refused.error?.code, "malformed")
    }

    // MARK: - Oracles

    /// Every value of `values` found in the file's bytes or inside any of its streams, inflated by Python's zlib
    /// wherever one starts (so also in the object streams of earlier revisions no reader shows), as ASCII or
    /// UTF-16BE (a PDF text string), either one written plain or as a hex string.
    static func present(_ path: String, _ values: [String]) -> [String] {
        let inflate = """
            import sys, zlib
            data = open(sys.argv[1], "rb").read()
            out = bytearray()
            at = data.find(b"stream")
            while at >= 0:
                start = at + 6 + (2 if data[at + 6:at + 8] == b"\\r\\n" else 1)
                try:
                    out += zlib.decompressobj().decompress(data[start:])
                except zlib.error:
                    pass
                at = data.find(b"stream", at + 6)
            sys.stdout.buffer.write(bytes(out))
            """
        let run = Tool.run(["python3", "-c", inflate, path])
        XCTAssertEqual(run.status, 0, run.stderr)
        let haystack = [UInt8](FileManager.default.contents(atPath: path) ?? Data()) + [UInt8](run.stdout)
        let lower = haystack.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
        return values.filter { value in
            let ascii = Array(value.utf8)
            let utf16 = value.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
            func hex(_ bytes: [UInt8]) -> [UInt8] { Array(bytes.map { String(format: "%02x", $0) }.joined().utf8) }
            return contains(haystack, ascii) || contains(haystack, utf16) || contains(lower, hex(ascii)) || contains(lower, hex(utf16))
        }
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, haystack.count >= needle.count else { return false }
        return haystack.withUnsafeBufferPointer { h in
            (0...(h.count - needle.count)).contains { i in h[i] == needle[0] && h[i..<(i + needle.count)].elementsEqual(needle) }
        }
    }

    /// The attached files poppler's pdfdetach saves, each in a folder of its own. (It exits 3 when a file
    /// specification it lists holds no file, as an annotation's does once its file is removed.)
    static func attachments(_ path: String) -> [String] {
        let folder = path + ".attached"
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        Tool.run(["pdfdetach", "-saveall", "-o", folder, path])
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted().map { folder + "/" + $0 }
    }

    /// poppler renders every page at 72 dpi to the same pixels and extracts the same text.
    func assertSamePages(_ before: String, _ after: String, file: StaticString = #filePath, line: UInt = #line) throws {
        func render(_ path: String, _ name: String) -> [Data] {
            let prefix = dir.file(name)
            XCTAssertEqual(Tool.run(["pdftoppm", "-r", "72", path, prefix]).status, 0, file: file, line: line)
            let pages = ((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? [])
                .filter { $0.hasPrefix(name + "-") && $0.hasSuffix(".ppm") }.sorted()
            return pages.compactMap { FileManager.default.contents(atPath: dir.file($0)) }
        }
        let left = render(before, "before-\(UUID().uuidString)"), right = render(after, "after-\(UUID().uuidString)")
        XCTAssertEqual(left.count, 2, "pages rendered", file: file, line: line)
        XCTAssertEqual(left, right, "a page renders differently", file: file, line: line)
        let text = { (path: String) in Tool.run(["pdftotext", "-layout", path, "-"]).stdout }
        XCTAssertFalse(text(before).isEmpty, file: file, line: line)
        XCTAssertEqual(text(before), text(after), "the text differs", file: file, line: line)
    }

    /// Written fresh: one cross-reference section, no /Prev to an earlier revision.
    func assertOneRevision(_ path: String, file: StaticString = #filePath, line: UInt = #line) {
        let bytes = [UInt8](FileManager.default.contents(atPath: path) ?? Data())
        let eof = Array("%%EOF".utf8)
        let count = (0...(bytes.count - eof.count)).filter { bytes[$0] == 0x25 && bytes[$0..<($0 + eof.count)].elementsEqual(eof) }.count
        XCTAssertEqual(count, 1, "revisions", file: file, line: line)
        XCTAssertFalse(Self.contains(bytes, Array("/Prev".utf8)), file: file, line: line)
    }
}
