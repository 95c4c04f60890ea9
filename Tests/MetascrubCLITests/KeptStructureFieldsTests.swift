// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import XCTest

/// A kept XMP structure cleaned inside (`scripts/fixtures/parts/78-kept.sh`): the packet is rebuilt without the
/// address fields a policy removes, and keeps the structure's other fields, rather than keeping the structure
/// whole or dropping it whole. ExifTool reads the outputs; ImageMagick compares the pixels.
final class KeptStructureFieldsTests: XCTestCase {
    var tmp = ""

    override func setUp() { tmp = Harness.makeTemp("kept-fields") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: tmp) }

    static let addresses = ["CANARY-LIC1-CITY", "CANARY-LIC1-STREET", "CANARY-LIC2-CITY", "75007",
                            "CANARY-CONTACT-CITY", "CANARY-CONTACT-STREET"]

    /// ExifTool's view of the output's XMP, structures as structures.
    func xmp(_ path: String) throws -> [String: Any] {
        let r = Harness.exec("exiftool", ["-j", "-struct", "-XMP:all", path], cwd: tmp)
        XCTAssertEqual(r.status, 0, r.stderr)
        let list = try JSONSerialization.jsonObject(with: r.stdout) as? [[String: Any]]
        return list?.first ?? [:]
    }

    func licensorNames(_ tags: [String: Any]) -> [String] {
        (tags["Licensor"] as? [[String: Any]] ?? []).compactMap { $0["LicensorName"] as? String }
    }

    /// Under `share` and `location` the licensors keep their names and lose their addresses; under `location` the
    /// creator's contact details keep the e-mail and lose the address. Pixels, rights and creator are unchanged,
    /// and a second clean finds nothing more to do.
    func testAddressFieldsLeaveKeptStructures() throws {
        try Harness.requireBinary(); try Harness.require("exiftool"); try Harness.require("compare")
        for name in ["xmp-struct-fields.jpg", "xmp-struct-fields.png"] {
            let input = Harness.fixture("kept/\(name)")
            XCTAssertEqual(licensorNames(try xmp(input)), ["Studio One", "Studio Two"], "fixture \(name)")
            for policy in ["share", "location"] {
                let out = "\(tmp)/\(policy)-\(name)"
                let r = Harness.metascrub(["clean", "--policy", policy, input, "--output", out])
                XCTAssertEqual(r.status, 0, "\(name) \(policy): \(r.out) \(r.stderr)")
                let tags = try xmp(out)
                XCTAssertEqual(licensorNames(tags), ["Studio One", "Studio Two"], "\(name) \(policy): \(tags)")
                XCTAssertEqual(tags["Rights"] as? String, "CC BY 4.0", "\(name) \(policy)")
                let bytes = try XCTUnwrap(Harness.data(out))
                for canary in Self.addresses {
                    for form in [Data(canary.utf8), canary.data(using: .utf16LittleEndian)!] {
                        XCTAssertNil(bytes.range(of: form), "\(name) \(policy): \(canary) left")
                    }
                }
                if policy == "location" {
                    let contact = tags["CreatorContactInfo"] as? [String: Any] ?? [:]
                    XCTAssertEqual(contact["CiEmailWork"] as? String, "contact@example.org", "\(name): \(tags)")
                    XCTAssertNil(contact["CiAdrCity"]); XCTAssertNil(contact["CiAdrExtadr"])
                }
                let pixels = Harness.exec("compare", ["-metric", "AE", input, out, "null:"], cwd: tmp)
                XCTAssertEqual(pixels.stderr.trimmingCharacters(in: .whitespacesAndNewlines), "0", "\(name) \(policy)")
                let again = Harness.metascrub(["clean", "--policy", policy, out, "--in-place"])
                XCTAssertEqual(again.status, 0, again.out + again.stderr)
                XCTAssertEqual(Harness.data(out), bytes, "\(name) \(policy): the fixed point does not hold")
            }
            let strict = "\(tmp)/strict-\(name)"
            XCTAssertEqual(Harness.metascrub(["clean", "--policy", "strict", input, "--output", strict]).status, 0)
            XCTAssertEqual(licensorNames(try xmp(strict)), [], "strict keeps no licensor")
            let stripped = try XCTUnwrap(Harness.data(strict))
            XCTAssertNil(stripped.range(of: Data("CANARY-".utf8)), "\(name): strict left a canary")
        }
    }
}
