// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import MetascrubCore
@testable import MetascrubFormats
import XCTest

/// The ICC tag-table reader on the fixture profiles and on damaged tables: typed errors with offsets, never a trap.
final class ICCTextTagsReaderTests: XCTestCase {
    func profile(_ fixture: String) throws -> [UInt8] {
        let r = Tool.run(["exiftool", "-b", "-ICC_Profile", Fixture.path(fixture)])
        XCTAssertFalse(r.stdout.isEmpty, fixture)
        return Array(r.stdout)
    }

    func testTextTagsOfV2AndV4ProfilesAreReadAndBlankedInPlace() throws {
        for fixture in ["icc/display.jpg", "icc/display-v4.png", "icc/display-split.jpg"] {
            let bytes = try profile(fixture)
            let tags = try ICCTextTags(bytes, path: fixture)
            XCTAssertEqual(tags.tags.map(\.signature), ["desc", "cprt", "dmnd", "dmdd"], fixture)
            XCTAssertTrue(tags.tags[0].text.contains("CANARY-ICC-OWNER"), "\(fixture): \(tags.tags[0].text)")
            XCTAssertTrue(tags.tags[3].text.contains("CANARY-ICC-SERIAL-5521"), fixture)
            let blanked = tags.blanked(bytes, signatures: ["desc", "cprt", "dmnd", "dmdd"])
            XCTAssertEqual(blanked.count, bytes.count)
            XCTAssertEqual(Array(blanked[84..<100]), [UInt8](repeating: 0, count: 16), fixture)
            XCTAssertTrue(try ICCTextTags(blanked, path: fixture).tags.isEmpty, fixture)
            // Only text and the profile ID changed: every differing byte lies in a tag's characters or the ID.
            let text = Set(tags.tags.flatMap { $0.characters.flatMap { Array($0) } } + Array(84..<100))
            for i in bytes.indices where bytes[i] != blanked[i] {
                XCTAssertTrue(text.contains(i), "\(fixture): byte \(i)")
            }
        }
    }

    func testDamagedTablesAreTypedErrors() throws {
        let good = try profile("icc/display.jpg")
        XCTAssertThrowsError(try ICCTextTags(Array(good.prefix(100)), path: "p")) {
            guard case MetascrubError.truncated = $0 else { return XCTFail("\($0)") }
        }
        var count = good
        count[128...131] = [0x7F, 0xFF, 0xFF, 0xFF]
        XCTAssertThrowsError(try ICCTextTags(count, path: "p")) {
            guard case MetascrubError.malformed(_, _, let offset, _) = $0 else { return XCTFail("\($0)") }
            XCTAssertEqual(offset, 128)
        }
        var outside = good
        outside[132 + 4...132 + 7] = [0x00, 0x10, 0x00, 0x00]  // desc's offset past the end
        XCTAssertThrowsError(try ICCTextTags(outside, path: "p")) {
            guard case MetascrubError.malformed(_, _, let offset, _) = $0 else { return XCTFail("\($0)") }
            XCTAssertEqual(offset, 132)
        }
        var ascii = good
        let descAt = Int(ascii[136]) << 24 | Int(ascii[137]) << 16 | Int(ascii[138]) << 8 | Int(ascii[139])
        ascii[descAt + 8...descAt + 11] = [0x00, 0x01, 0x00, 0x00]  // an ASCII count larger than the element
        XCTAssertThrowsError(try ICCTextTags(ascii, path: "p"))
    }
}
