// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubCore
import MetascrubFormats
import XCTest

/// Every document row of the format registry, one cleaned file each, with elements no reader knows planted the way
/// an editor's incremental save would add them: an unknown catalog key, an unknown Info key, an object nothing
/// refers to, and bytes after the last end-of-file marker, each carrying a stranger's name and position. Under
/// strict, share and location the clean removes them or refuses; `cleaned` or `clean` with the planted bytes still in
/// the output (as text, UTF-16, or inside a zlib stream) fails, and so does a page that renders differently.
final class PlantedDocumentElementTests: XCTestCase {
    static let fixtures = ["pdf": "pdf/report.pdf"]

    func testEveryDocumentRowHasACase() {
        for entry in FormatRegistry.entries where entry.format.kind == .document {
            XCTAssertNotNil(Self.fixtures[entry.format.id], "\(entry.format.id): a new document row needs a case here")
        }
    }

    func testPlantedElementsInPDFGoOrTheCleanRefuses() throws {
        try Tool.require("pdftoppm")
        let dir = TempDir()
        let base = dir.file("base.pdf")
        XCTAssertEqual(Run.clean(Fixture.path(Self.fixtures["pdf"]!), to: base).status, .cleaned)
        let bytes = [UInt8](FileManager.default.contents(atPath: base) ?? Data())
        XCTAssertEqual(Planted.findings(in: bytes), [], "the base already holds planted text")
        let reference = Self.pages(base, in: dir)
        XCTAssertFalse(reference.isEmpty)
        let text = "(" + Planted.text + ")"
        let variants: [(String, [UInt8]?)] = [
            ("bytes after %%EOF", bytes + Array("\n% \(Planted.text)\n".utf8)),
            ("unknown catalog key", Self.update(bytes, catalogKey: "/PlantedKey \(text)")),
            ("unknown Info key", Self.update(bytes, infoKey: "/PlantedKey \(text)")),
            ("object nothing refers to", Self.update(bytes, orphan: text)),
            ("UTF-16 Info key", Self.update(bytes, infoKey: "/PlantedKey <FEFF\(Self.hex(Planted.utf16BE))>")),
        ]
        for (name, planted) in variants {
            guard let planted else { XCTFail("\(name): could not write the update"); continue }
            XCTAssertNotEqual(Planted.findings(in: planted), [], "\(name): the search does not see what was planted")
            let input = dir.file("planted.pdf")
            FileManager.default.createFile(atPath: input, contents: Data(planted))
            for policy in ["strict", "share", "location"] {
                let output = dir.file("out-\(policy).pdf")
                try? FileManager.default.removeItem(atPath: output)
                let report = Run.clean(input, to: output, policy: policy)
                switch report.status {
                case .cleaned:
                    XCTAssertEqual(Planted.findings(atPath: output), [], "\(policy) \(name): planted bytes left")
                    XCTAssertEqual(Self.pages(output, in: dir), reference, "\(policy) \(name): pages render differently")
                    let again = Run.clean(output, to: dir.file("again-\(policy).pdf"), policy: policy)
                    XCTAssertEqual(again.status, .clean, "\(policy) \(name): not a fixed point")
                case .clean:
                    XCTFail("\(policy) \(name): called clean with planted bytes in it")
                case .error, .skipped, .findings:
                    let written = FileManager.default.fileExists(atPath: output)
                    XCTAssertFalse(written && !Planted.findings(atPath: output).isEmpty,
                                   "\(policy) \(name): refused but wrote the planted bytes")
                }
            }
        }
    }

    /// Every page rendered at 72 dpi by poppler, as PPM bytes.
    static func pages(_ path: String, in dir: TempDir) -> [Data] {
        let prefix = dir.file("page-\(UUID().uuidString)")
        guard Tool.run(["pdftoppm", "-r", "72", path, prefix]).status == 0 else { return [] }
        let folder = (prefix as NSString).deletingLastPathComponent
        let name = (prefix as NSString).lastPathComponent
        let files = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [])
            .filter { $0.hasPrefix(name) }.sorted()
        return files.compactMap { FileManager.default.contents(atPath: (folder as NSString).appendingPathComponent($0)) }
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02X", $0) }.joined() }

    /// An incremental update appended to `bytes` (a file with a classic xref table, as the cleaner writes): a new
    /// catalog with an extra key, a new Info dictionary with an extra key, or an object nothing refers to.
    static func update(_ bytes: [UInt8], catalogKey: String? = nil, infoKey: String? = nil,
                       orphan: String? = nil) -> [UInt8]? {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let root = match(text, #"/Root (\d+) 0 R"#), let size = match(text, #"/Size (\d+)"#).flatMap(Int.init),
              let previous = match(text, #"startxref\s+(\d+)\s+%%EOF\s*$"#) else { return nil }
        var objects: [(Int, String)] = []
        var rootRef = "\(root) 0 R"
        var infoRef = match(text, #"/Info (\d+) 0 R"#).map { "/Info \($0) 0 R" } ?? ""
        if let catalogKey {
            guard let body = dictionary(text, object: root) else { return nil }
            objects.append((size, String(body.dropLast(2)) + " \(catalogKey) >>"))
            rootRef = "\(size) 0 R"
        }
        if let infoKey {
            objects.append((size + objects.count, "<< /Producer (metascrub test) \(infoKey) >>"))
            infoRef = "/Info \(size + objects.count - 1) 0 R"
        }
        if let orphan { objects.append((size + objects.count, orphan)) }
        var out = text.hasSuffix("\n") ? text : text + "\n"
        var offsets: [Int] = []
        for (number, body) in objects {
            offsets.append(out.utf8.count)
            out += "\(number) 0 obj\n\(body)\nendobj\n"
        }
        let xref = out.utf8.count
        out += "xref\n0 1\n0000000000 65535 f \n\(size) \(objects.count)\n"
        for offset in offsets { out += String(format: "%010d 00000 n \n", offset) }
        out += "trailer\n<< /Size \(size + objects.count) /Root \(rootRef) \(infoRef) /Prev \(previous) >>\n"
        out += "startxref\n\(xref)\n%%EOF\n"
        return Array(out.utf8)
    }

    private static func match(_ text: String, _ pattern: String) -> String? {
        guard let regex = try? NSRegularExpression(pattern: pattern),
              let m = regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).last,
              let r = Range(m.range(at: 1), in: text) else { return nil }
        return String(text[r])
    }

    /// The dictionary text of object `number` (`<< … >>`), as written between `obj` and `endobj`.
    private static func dictionary(_ text: String, object number: String) -> String? {
        guard let start = text.range(of: "\n\(number) 0 obj"),
              let end = text.range(of: "endobj", range: start.upperBound..<text.endIndex) else { return nil }
        let body = text[start.upperBound..<end.lowerBound].trimmingCharacters(in: .whitespacesAndNewlines)
        return body.hasPrefix("<<") && body.hasSuffix(">>") ? body : nil
    }
}
