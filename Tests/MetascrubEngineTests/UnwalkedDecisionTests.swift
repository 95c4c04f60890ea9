// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
@testable import Metascrub
import MetascrubCore
import XCTest

/// `unwalked: fail` refuses a file for a part the scanner could not walk only when the clean keeps that part: an
/// unknown maker note a policy removes whole goes with everything inside it, walked or not.
final class UnwalkedDecisionTests: XCTestCase {
    let note = Note(.warning, code: "makernote-unknown", "maker note of an unlisted layout", offset: 100)
    let makerNote = MetadataItem(key: "exif:MakerNote", category: .device, location: "ExifIFD/0x927c", offset: 100,
                                 length: 64)

    func verifier() throws -> Verifier { Verifier(options: ProcessingOptions(policy: try PolicyCatalog.builtin("strict"))) }

    func testRemovedUnwalkedPartDoesNotRefuse() throws {
        XCTAssertNoThrow(try verifier().checkWalked([note], findings: [Finding(item: makerNote, disposition: .remove,
                                                                                 rule: "category device")]))
    }

    func testKeptOrUnplacedUnwalkedPartRefuses() throws {
        XCTAssertThrowsError(try verifier().checkWalked([note], findings: [Finding(item: makerNote, disposition: .keep,
                                                                                     rule: "kept")]))
        let unplaced = Note(.warning, code: "layers-unwalked", "layers not walked")
        XCTAssertThrowsError(try verifier().checkWalked([unplaced], findings: [Finding(item: makerNote,
                                                                                      disposition: .remove, rule: "r")]))
        var keep = try PolicyCatalog.builtin("strict")
        keep.unwalked = .keep
        XCTAssertNoThrow(try Verifier(options: ProcessingOptions(policy: keep)).checkWalked([note], findings: []))
    }
}
