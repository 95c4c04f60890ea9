// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubCore
@testable import MetascrubFormats
import XCTest

/// SVG: editor data, RDF metadata, comments, titles and the EXIF of embedded images go; the drawing renders the
/// same (librsvg's `rsvg-convert`, compared by ImageMagick), and no planted value is left in ASCII, UTF-16 or
/// inside a base64 image.
final class SVGTests: XCTestCase {
    static let inkscape = "svg/inkscape.svg"
    static let all = ["CANARY-SVG-COMMENT", "CANARY-SVG-DOCNAME", "CANARY-SVG-USER", "CANARY-SVG-CREATOR", "CANARY-SVG-TITLE",
                      "48.8583", "CANARY-SVG-JPEG-ARTIST", "CANARY-SVG-JPEG-MAKE", "inkscape:", "sodipodi:"]

    override func setUpWithError() throws {
        try Tool.require("exiftool", "rsvg-convert", "compare")
    }

    func testEditorDataMetadataAndEmbeddedImagesAreItems() {
        let scan = Run.scan(Fixture.path(Self.inkscape))
        XCTAssertEqual(scan.format, "svg")
        let keys = Set(scan.findings.map(\.item.key))
        for key in ["svg:comment", "svg:sodipodi:docname", "svg:inkscape:export-filename", "svg:sodipodi:namedview", "svg:metadata",
                    "svg:title", "svg:desc", "svg:image", "svg:inkscape:label", "exif:GPSLatitude", "exif:Artist"] {
            XCTAssertTrue(keys.contains(key), "missing \(key) in \(keys.sorted())")
        }
        let byKey = Dictionary(scan.findings.map { ($0.item.key, $0.item) }, uniquingKeysWith: { a, _ in a })
        XCTAssertEqual(byKey["svg:inkscape:export-filename"]?.category, .identity)
        XCTAssertEqual(byKey["svg:metadata"]?.category, .identity)
        XCTAssertEqual(byKey["svg:image"]?.category, .embedded)
    }

    func testEveryPolicyRendersTheSameAndLeavesNoPlantedValue() throws {
        let tmp = TempDir()
        let expectations: [(String, [String])] = [
            ("strict", Self.all),
            ("share", Self.all.filter { $0 != "CANARY-SVG-JPEG-ARTIST" }),
            ("location", ["48.8583", "GPS"]),
        ]
        let input = Fixture.path(Self.inkscape)
        for (policy, gone) in expectations {
            let output = tmp.file("\(policy).svg")
            let report = Run.clean(input, to: output, policy: policy)
            XCTAssertEqual(report.status, .cleaned, "\(policy): \(report.error?.message ?? "")")
            XCTAssertEqual(report.verification?.contentResult, .passed, policy)
            let images = try embeddedImages(output, tmp)
            XCTAssertEqual(images.count, 1, "\(policy): the embedded JPEG stays")
            for canary in gone {
                XCTAssertFalse(Residue.contains(output, canary), "\(policy): \(canary) left")
                for image in images { XCTAssertFalse(Residue.contains(image, canary), "\(policy): \(canary) left in the base64 JPEG") }
            }
            for image in images { XCTAssertNil(Oracle.exiftool(image)["GPS:GPSLatitude"], "\(policy): GPS left in the JPEG") }
            XCTAssertEqual(try differingPixels(input, output, tmp), "0", "\(policy): the rendering changed")
            XCTAssertEqual(Run.scan(output, policy: policy).status, .clean, "\(policy): scan of the output")
            XCTAssertEqual(Run.clean(output, to: tmp.file("again-\(policy).svg"), policy: policy).status, .clean)
        }
        XCTAssertTrue(Oracle.contains(tmp.file("location.svg"), "CANARY-SVG-CREATOR"), "location keeps the creator")
    }

    /// An SVG is hostile XML: an external entity naming a local file is never read into the output (the reference
    /// stays a reference), and an entity-expansion bomb is refused or copied unexpanded, never expanded.
    func testExternalEntitiesAreNeverLoaded() throws {
        let tmp = TempDir()
        let secret = tmp.file("secret.txt")
        try "CANARY-LOCAL-SECRET".write(toFile: secret, atomically: true, encoding: .utf8)
        let head = "<?xml version=\"1.0\"?>\n<!DOCTYPE svg [<!ENTITY leak SYSTEM \"file://\(secret)\">"
        let body = "<svg xmlns=\"http://www.w3.org/2000/svg\" xmlns:inkscape=\"http://www.inkscape.org/namespaces/inkscape\" "
            + "width=\"8\" height=\"8\" inkscape:label=\"x\"><text>&leak;</text><rect width=\"8\" height=\"8\"/></svg>"
        try (head + "]>\n" + body).write(toFile: tmp.file("xxe.svg"), atomically: true, encoding: .utf8)
        let report = Run.clean(tmp.file("xxe.svg"), to: tmp.file("out.svg"))
        XCTAssertEqual(report.status, .cleaned, report.error?.message ?? "")
        XCTAssertFalse(Oracle.contains(tmp.file("out.svg"), "CANARY-LOCAL-SECRET"))
        XCTAssertTrue(Oracle.contains(tmp.file("out.svg"), "&leak;"), "the reference stays a reference")

        let bomb = "<?xml version=\"1.0\"?>\n<!DOCTYPE svg [<!ENTITY a \"aaaaaaaaaa\">"
            + (1...8).map { "<!ENTITY e\($0) \"" + String(repeating: $0 == 1 ? "&a;" : "&e\($0 - 1);", count: 10) + "\">" }.joined()
            + "]>\n" + body.replacingOccurrences(of: "&leak;", with: "&e8;")
        try bomb.write(toFile: tmp.file("bomb.svg"), atomically: true, encoding: .utf8)
        let bombed = Run.clean(tmp.file("bomb.svg"), to: tmp.file("bomb-out.svg"))
        XCTAssertTrue([.error, .cleaned].contains(bombed.status), "\(bombed.status)")
        if bombed.status == .cleaned {
            let size = (try? FileManager.default.attributesOfItem(atPath: tmp.file("bomb-out.svg"))[.size] as? Int) ?? 0
            XCTAssertLessThan(size ?? 0, 4096, "an entity was expanded")
        }
    }

    /// What Illustrator and Inkscape leave besides their own namespaces: an image linked by its path on the author's
    /// disk goes, a site path stays, foreign elements go, and a style-sheet instruction (it decides the rendering)
    /// stays; the rendering is unchanged.
    func testLinkedFilesAndForeignElements() throws {
        let tmp = TempDir()
        let svg = """
            <?xml version="1.0" encoding="UTF-8"?>
            <?xml-stylesheet type="text/css" href="data:text/css,rect%7Bfill:%23369%7D"?>
            <?illustrator CANARY-PI-VALUE?>
            <svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"
                 xmlns:i="http://ns.adobe.com/AdobeIllustrator/10.0/" width="16" height="16">
              <i:pgf id="adobe_illustrator_pgf">CANARY-PGF-DATA</i:pgf>
              <rect width="16" height="16"/>
              <image width="4" height="4" xlink:href="file:///home/CANARY-LINK-USER/Pictures/photo.jpg"/>
              <image width="4" height="4" x="8" href="/images/site-logo.png"/>
            </svg>
            """
        try svg.write(toFile: tmp.file("in.svg"), atomically: true, encoding: .utf8)
        let keys = Set(Run.scan(tmp.file("in.svg")).findings.map(\.item.key))
        XCTAssertTrue(keys.isSuperset(of: ["svg:linked-file", "svg:i:pgf", "svg:processing-instruction"]), "\(keys.sorted())")
        let report = Run.clean(tmp.file("in.svg"), to: tmp.file("out.svg"))
        XCTAssertEqual(report.status, .cleaned, report.error?.message ?? "")
        for gone in ["CANARY-LINK-USER", "CANARY-PGF-DATA", "CANARY-PI-VALUE", "adobe.com"] {
            XCTAssertFalse(Residue.contains(tmp.file("out.svg"), gone), gone)
        }
        XCTAssertTrue(Oracle.contains(tmp.file("out.svg"), "/images/site-logo.png"))
        XCTAssertTrue(Oracle.contains(tmp.file("out.svg"), "xml-stylesheet"))
        XCTAssertEqual(try differingPixels(tmp.file("in.svg"), tmp.file("out.svg"), tmp), "0")
    }

    /// A photo inside CSS (a style sheet or a style attribute) is an embedded file too: cleaned in place, the text
    /// around it unchanged.
    func testImagesInsideCSSAreCleaned() throws {
        let tmp = TempDir()
        let inkscape = try String(contentsOfFile: Fixture.path(Self.inkscape), encoding: .utf8)
        let start = try XCTUnwrap(inkscape.range(of: "base64,")).upperBound
        let jpeg = inkscape[start...].prefix { $0 != "\"" }.filter { !$0.isWhitespace }
        let svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="16" height="16">
              <style>.photo { background-image: url(data:image/jpeg;base64,\(jpeg)); }</style>
              <rect width="16" height="16" fill="#369" style="cursor: url('data:image/jpeg;base64,\(jpeg)'), auto"/>
            </svg>
            """
        try svg.write(toFile: tmp.file("css.svg"), atomically: true, encoding: .utf8)
        let scan = Run.scan(tmp.file("css.svg"))
        XCTAssertEqual(scan.findings.filter { $0.item.key == "svg:image" }.count, 2)
        XCTAssertTrue(scan.findings.contains { $0.item.key == "exif:GPSLatitude" })
        let report = Run.clean(tmp.file("css.svg"), to: tmp.file("out.svg"))
        XCTAssertEqual(report.status, .cleaned, report.error?.message ?? "")
        let images = try embeddedImages(tmp.file("out.svg"), tmp)
        XCTAssertEqual(images.count, 2)
        for image in images {
            XCTAssertNil(Oracle.exiftool(image)["GPS:GPSLatitude"])
            XCTAssertFalse(Residue.contains(image, "CANARY-SVG-JPEG-ARTIST"))
        }
        XCTAssertTrue(Oracle.contains(tmp.file("out.svg"), "cursor: url('data:image/jpeg;base64,"))
        XCTAssertEqual(try differingPixels(tmp.file("css.svg"), tmp.file("out.svg"), tmp), "0")
        XCTAssertEqual(Run.scan(tmp.file("out.svg")).status, .clean)
    }

    func testNotWellFormedIsRefused() throws {
        let tmp = TempDir()
        try "<svg xmlns=\"http://www.w3.org/2000/svg\"><rect></svg>".write(toFile: tmp.file("bad.svg"), atomically: true, encoding: .utf8)
        XCTAssertEqual(Run.scan(tmp.file("bad.svg")).status, .error)
    }

    /// The images in `data:` URIs of an SVG, decoded to files.
    func embeddedImages(_ path: String, _ tmp: TempDir) throws -> [String] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var files: [String] = []
        for part in text.components(separatedBy: "data:image/").dropFirst() {
            guard let comma = part.firstIndex(of: ",") else { continue }
            let end = part[part.index(after: comma)...].firstIndex { !($0.isLetter || $0.isNumber || "+/=".contains($0) || $0.isWhitespace) } ?? part.endIndex
            let body = part[part.index(after: comma)..<end].filter { !$0.isWhitespace }
            let bytes = try XCTUnwrap(Data(base64Encoded: String(body)))
            let file = tmp.file("image-\(files.count)-\(UUID().uuidString)")
            FileManager.default.createFile(atPath: file, contents: bytes)
            files.append(file)
        }
        return files
    }

    /// How many pixels differ between the two files rendered by librsvg (ImageMagick `compare -metric AE`).
    func differingPixels(_ a: String, _ b: String, _ tmp: TempDir) throws -> String {
        let pa = tmp.file(UUID().uuidString + ".png"), pb = tmp.file(UUID().uuidString + ".png")
        XCTAssertEqual(Tool.run(["rsvg-convert", a, "-o", pa]).status, 0)
        XCTAssertEqual(Tool.run(["rsvg-convert", b, "-o", pb]).status, 0)
        let r = Tool.run(["compare", "-metric", "AE", pa, pb, "null:"])
        return r.stderr.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
