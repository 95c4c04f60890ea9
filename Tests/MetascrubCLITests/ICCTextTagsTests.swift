// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import XCTest

/// ICC profile text tags (`scripts/fixtures/parts/79-icc.sh`): under policies that remove identity and device the
/// owner and serial in a display profile's desc/cprt/dmnd/dmdd are blanked in place while the profile stays; under
/// `location` it is byte-identical. ExifTool reads the profiles; ImageMagick (LittleCMS) renders original and output
/// through their profiles to the same sRGB target and compares the pixels.
final class ICCTextTagsTests: XCTestCase {
    var tmp = ""

    override func setUp() { tmp = Harness.makeTemp("icc-text") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: tmp) }

    static let fixtures = ["display-split.jpg", "display.jpg", "display.webp", "display-v4.webp", "display-v4.png"]
    /// The tags a conversion reads; they must come out unchanged.
    static let rendering = ["MediaWhitePoint", "RedMatrixColumn", "GreenMatrixColumn", "BlueMatrixColumn",
                            "RedTRC", "GreenTRC", "BlueTRC", "ProfileClass", "ColorSpaceData", "ProfileConnectionSpace"]

    func icc(_ path: String) throws -> [String: Any] {
        let r = Harness.exec("exiftool", ["-j", "-b", "-ICC_Profile:all", "-ICC-header:all", path], cwd: tmp)
        XCTAssertEqual(r.status, 0, r.stderr)
        let list = try JSONSerialization.jsonObject(with: r.stdout) as? [[String: Any]]
        return list?.first ?? [:]
    }

    func profileBytes(_ path: String) -> Data {
        Harness.exec("exiftool", ["-b", "-ICC_Profile", path], cwd: tmp).stdout
    }

    /// Original and output converted through their own profiles to the sRGB target: the same pixels.
    func renderedDifference(_ a: String, _ b: String, name: String) -> String {
        // The target: the sRGB profile another fixture carries, taken out by ExifTool.
        let target = "\(tmp)/srgb-target.icc"
        if !Harness.exists(target) {
            let profile = Harness.exec("exiftool", ["-b", "-ICC_Profile", Harness.fixture("png/iccp.png")], cwd: tmp).stdout
            XCTAssertFalse(profile.isEmpty)
            FileManager.default.createFile(atPath: target, contents: profile)
        }
        for (input, out) in [(a, "\(tmp)/a-\(name).ppm"), (b, "\(tmp)/b-\(name).ppm")] {
            let r = Harness.exec("convert", [input, "-profile", target, out], cwd: tmp)
            XCTAssertEqual(r.status, 0, "\(name): \(r.stderr)")
        }
        let pair = ["\(tmp)/a-\(name).ppm", "\(tmp)/b-\(name).ppm"]
        return Harness.exec("compare", ["-metric", "AE"] + pair + ["null:"], cwd: tmp)
            .stderr.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func testStrictAndShareBlankTheTextAndKeepTheRendering() throws {
        try Harness.requireBinary(); try Harness.require("exiftool")
        try Harness.require("convert"); try Harness.require("compare")
        for name in Self.fixtures {
            let input = Harness.fixture("icc/\(name)")
            let before = try icc(input)
            XCTAssertTrue("\(before)".contains("CANARY-ICC-OWNER"), "fixture \(name): \(before)")
            // The fixture's profile really changes the colours: a check that ignored the profile would not notice.
            XCTAssertNotEqual(renderedDifference(input, input, name: "\(name)-self"), "", name)
            for policy in ["strict", "share"] {
                let out = "\(tmp)/\(policy)-\(name)"
                let r = Harness.metascrub(["clean", "--policy", policy, input, "--output", out])
                XCTAssertEqual(r.status, 0, "\(name) \(policy): \(r.out) \(r.stderr)")
                let after = try icc(out)
                XCTAssertFalse("\(after)".contains("CANARY"), "\(name) \(policy): \(after)")
                let id = "\(after["ProfileID"] ?? "")"
                XCTAssertEqual(id, "0", "\(name) \(policy): the profile ID must read as not computed")
                for tag in Self.rendering {
                    XCTAssertNotNil(before[tag], "\(name): \(tag)")
                    XCTAssertEqual("\(before[tag] ?? "")", "\(after[tag] ?? "")", "\(name) \(policy): \(tag) changed")
                }
                XCTAssertEqual(profileBytes(out).count, profileBytes(input).count, "\(name) \(policy): size changed")
                XCTAssertEqual(renderedDifference(input, out, name: "\(policy)-\(name)"), "0", "\(name) \(policy)")
                let bytes = try XCTUnwrap(Harness.data(out))
                for canary in ["CANARY-ICC-OWNER", "CANARY-ICC-SERIAL-5521"] {
                    for form in [Data(canary.utf8), canary.data(using: .utf16BigEndian)!] {
                        XCTAssertNil(bytes.range(of: form), "\(name) \(policy): \(canary) left")
                    }
                }
                let scan = Harness.metascrub(["scan", "--policy", policy, out])
                XCTAssertEqual(scan.status, 0, "\(name) \(policy): \(scan.out)")
                let again = Harness.metascrub(["clean", "--policy", policy, out, "--in-place"])
                XCTAssertEqual(again.status, 0, again.out + again.stderr)
                XCTAssertEqual(Harness.data(out), bytes, "\(name) \(policy): the fixed point does not hold")
            }
        }
    }

    func testLocationKeepsTheProfileByteForByte() throws {
        try Harness.requireBinary(); try Harness.require("exiftool")
        for name in Self.fixtures {
            let input = Harness.fixture("icc/\(name)")
            let out = "\(tmp)/location-\(name)"
            let r = Harness.metascrub(["clean", "--policy", "location", input, "--output", out])
            XCTAssertEqual(r.status, 0, "\(name): \(r.out) \(r.stderr)")
            XCTAssertFalse(profileBytes(input).isEmpty, name)
            XCTAssertEqual(profileBytes(out), profileBytes(input), "\(name): location changed the profile")
        }
    }

    /// The items are listed inside the profile with their categories; values only with --show-values.
    func testScanListsTheTextTags() throws {
        try Harness.requireBinary()
        let input = Harness.fixture("icc/display.jpg")
        let plain = Harness.metascrub(["scan", "-v", "--policy", "strict", input])
        for key in ["icc:desc", "icc:cprt", "icc:dmnd", "icc:dmdd"] {
            XCTAssertTrue(plain.out.contains(key), plain.out)
        }
        XCTAssertFalse(plain.out.contains("CANARY-ICC-OWNER"), plain.out)
        let shown = Harness.metascrub(["scan", "-v", "--show-values", "--policy", "strict", input])
        XCTAssertTrue(shown.out.contains("CANARY-ICC-OWNER"), shown.out)
    }
}
