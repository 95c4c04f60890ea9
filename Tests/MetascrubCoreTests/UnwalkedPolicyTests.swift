// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import XCTest
@testable import MetascrubCore

/// `unwalked: fail|keep` (issue 23): what a clean does when part of a file could not be walked.
final class UnwalkedPolicyTests: XCTestCase {
    func testDefaultFailsAndKeepIsRead() throws {
        XCTAssertEqual(try PolicyLoader.load(yaml: "schema: 1\nname: a\n", file: "a.yaml").unwalked, .fail)
        XCTAssertEqual(try PolicyCatalog.builtin("strict").unwalked, .fail)
        XCTAssertEqual(try PolicyLoader.load(yaml: "schema: 1\nname: a\nunwalked: keep\n", file: "a.yaml").unwalked, .keep)
        XCTAssertThrowsError(try PolicyLoader.load(yaml: "schema: 1\nname: a\nunwalked: maybe\n", file: "a.yaml")) { error in
            XCTAssertTrue("\(error)".contains("unwalked"), "\(error)")
        }
    }
}
