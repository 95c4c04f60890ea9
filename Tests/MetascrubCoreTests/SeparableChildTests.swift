// SPDX-License-Identifier: GPL-3.0-or-later
import XCTest
@testable import MetascrubCore

/// A kept block whose removed child its handler can write it without (a field of an XMP structure) stays kept and
/// is rebuilt; any other removed child still takes its block with it.
final class SeparableChildTests: XCTestCase {
    func items(separable: Bool) -> [MetadataItem] {
        var city = MetadataItem(key: "xmp:plus:Licensor/plus:LicensorCity", category: .location, location: "c",
                                parent: 0)
        city.separable = separable
        return [MetadataItem(key: "xmp:plus:Licensor", category: .identity, location: "p"), city]
    }

    func testSeparableChildLeavesItsBlockKept() throws {
        let location = try PolicyCatalog.builtin("location")
        let findings = location.evaluate(items(separable: true))
        XCTAssertEqual(findings.map(\.disposition), [.keep, .remove])
        XCTAssertTrue(findings[0].rule.contains("rebuilt without xmp:plus:Licensor/plus:LicensorCity"), findings[0].rule)
        XCTAssertEqual(location.evaluate(items(separable: false)).map(\.disposition), [.remove, .remove])
    }

    /// A removed block takes a separable child with it, and a forbidden child still forbids its block.
    func testRemovedOrForbiddenBlocksAreUnchanged() throws {
        XCTAssertEqual(try PolicyCatalog.builtin("strict").evaluate(items(separable: true)).map(\.disposition),
                       [.remove, .remove])
        let refuse = try PolicyLoader.load(
            yaml: "schema: 1\nname: r\ndefault: keep\ncategories:\n  location: fail\n", file: "r.yaml")
        XCTAssertEqual(refuse.evaluate(items(separable: true)).map(\.disposition), [.fail, .fail])
    }
}
