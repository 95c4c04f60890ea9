// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import MetascrubCore
import XCTest

/// Bytes inside a block a policy keeps that no reader reads: an XML comment in an XMP packet whose properties are all
/// kept, and bytes after an IPTC block's last dataset. Each is an unknown item, so the block is rebuilt without them
/// under every policy, and what the policy keeps (dc:rights, CopyrightNotice) stays.
final class KeptBlockSlackTests: XCTestCase {
    static let planted = Array("ATKPOS 48.8583, 2.2945 /home/alice/Pictures Alice Example".utf8)

    func segment(_ marker: UInt8, _ body: [UInt8]) -> [UInt8] {
        [0xFF, marker, UInt8((body.count + 2) >> 8), UInt8((body.count + 2) & 0xFF)] + body
    }

    func files() throws -> [(String, [UInt8])] {
        let jpeg = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Fixture.path("jpeg/clean.jpg"))))
        let xmp = Array(("<?xpacket begin=\"\u{FEFF}\" id=\"W5M0MpCehiHzreSzNTczkc9d\"?><x:xmpmeta xmlns:x=\"adobe:ns:meta/\">"
            + "<rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\"><!-- ").utf8) + Self.planted
            + Array((" --><rdf:Description rdf:about=\"\" xmlns:dc=\"http://purl.org/dc/elements/1.1/\"><dc:rights><rdf:Alt>"
            + "<rdf:li xml:lang=\"x-default\">CC BY 4.0</rdf:li></rdf:Alt></dc:rights></rdf:Description></rdf:RDF>"
            + "</x:xmpmeta><?xpacket end=\"w\"?>").utf8)
        let app1 = segment(0xE1, Array("http://ns.adobe.com/xap/1.0/\0".utf8) + xmp)
        let datasets: [UInt8] = [0x1C, 2, 0, 0, 2, 0, 4, 0x1C, 2, 116, 0, 9] + Array("CC BY 4.0".utf8)
        let iptc = datasets + Self.planted
        var resource = Array("8BIM".utf8) + [4, 4, 0, 0] + [0, 0, UInt8(iptc.count >> 8), UInt8(iptc.count & 0xFF)] + iptc
        if iptc.count % 2 == 1 { resource.append(0) }
        let app13 = segment(0xED, Array("Photoshop 3.0\0".utf8) + resource)
        return [("xmp-comment.jpg", Array(jpeg[0..<2]) + app1 + Array(jpeg[2...])),
                ("iptc-slack.jpg", Array(jpeg[0..<2]) + app13 + Array(jpeg[2...]))]
    }

    func testSlackInKeptBlocksIsGoneUnderEveryPolicy() throws {
        try Tool.require("exiftool")
        let dir = TempDir()
        for (name, bytes) in try files() {
            let input = dir.file(name)
            try Data(bytes).write(to: URL(fileURLWithPath: input))
            for policy in ["strict", "share", "location"] {
                let output = dir.file("\(policy)-\(name)")
                let report = Run.clean(input, to: output, policy: policy)
                XCTAssertEqual(report.status, .cleaned, "\(policy) \(name): \(report.error.map { "\($0)" } ?? "")")
                for needle in ["ATKPOS", "48.8583", "alice"] {
                    XCTAssertFalse(Oracle.contains(output, needle), "\(policy) \(name): \(needle) left")
                }
                XCTAssertEqual(Run.scan(output, policy: policy).status, .clean, "\(policy) \(name): scan after clean")
            }
            let kept = String(decoding: Tool.run(["exiftool", "-s3", "-XMP-dc:Rights", "-IPTC:CopyrightNotice",
                                                  dir.file("share-\(name)")]).stdout, as: UTF8.self)
            XCTAssertTrue(kept.contains("CC BY 4.0"), "\(name): share keeps the rights statement: \(kept)")
        }
    }
}
