// SPDX-License-Identifier: GPL-3.0-or-later
import XCTest
@testable import MetascrubCore

/// Issue 23, item 3: the `clean` disposition of embedded files (keep the file, clean it inside).
final class CleanDispositionTests: XCTestCase {
    private func item(_ key: String, _ category: MetascrubCore.Category, parent: Int? = nil, embedded: String? = nil) -> MetadataItem {
        var item = MetadataItem(key: key, category: category, location: "test", parent: parent)
        item.embeddedFormat = embedded
        return item
    }

    /// A cover (0) holding a GPS entry (1) and a Make entry (2), and a maker note (3) holding a serial (4); a
    /// thumbnail (5) that is no file metascrub can look into.
    private var cover: [MetadataItem] {
        [item("id3:APIC", .embedded, embedded: "jpeg"), item("exif:GPSLatitude", .location, parent: 0),
         item("exif:Make", .device, parent: 0), item("exif:MakerNote", .device, parent: 0),
         item("makernote:Canon.GPS", .location, parent: 3), item("exif:thumbnail", .embedded)]
    }

    func testShippedLocationAndShareCleanEmbeddedFilesAndStrictRemovesThem() throws {
        XCTAssertEqual(try PolicyCatalog.builtin("location").categories[.embedded], .clean)
        XCTAssertEqual(try PolicyCatalog.builtin("share").categories[.embedded], .clean)
        XCTAssertEqual(try PolicyCatalog.builtin("strict").categories[.embedded], .remove)
        let location = try PolicyCatalog.builtin("location").evaluate(cover).map(\.disposition)
        // The cover stays, cleaned inside; its GPS goes, and the maker note holding a position; the thumbnail
        // cannot be cleaned and goes.
        XCTAssertEqual(location, [.clean, .remove, .keep, .remove, .remove, .remove])
        let strict = try PolicyCatalog.builtin("strict").evaluate(cover).map(\.disposition)
        XCTAssertEqual(strict, [.remove, .remove, .remove, .remove, .remove, .remove])
    }

    func testKeepOfAnEmbeddedFileWithItemsToRemoveCleansIt() throws {
        let policy = try PolicyLoader.load(yaml: "schema: 1\nname: k\ndefault: keep\ncategories:\n  embedded: keep\n  location: remove\n", file: "k.yaml")
        let findings = policy.evaluate(cover)
        XCTAssertEqual(findings[0].disposition, .clean)
        XCTAssertEqual(findings[1].disposition, .remove)
        XCTAssertEqual(findings[2].disposition, .keep)
        XCTAssertEqual(findings[5].disposition, .keep)
        // Nothing inside to remove: kept as it is, so a second clean changes nothing.
        let clean = [item("id3:APIC", .embedded, embedded: "jpeg"), item("exif:Make", .device, parent: 0)]
        XCTAssertEqual(policy.evaluate(clean).map(\.disposition), [.keep, .keep])
        let cleanPolicy = try PolicyLoader.load(yaml: "schema: 1\nname: k\ndefault: keep\ncategories:\n  embedded: clean\n", file: "k.yaml")
        XCTAssertEqual(cleanPolicy.evaluate(clean).map(\.disposition), [.keep, .keep])
    }

    func testFailInsideACleanedFileFailsIt() throws {
        let policy = try PolicyLoader.load(yaml: "schema: 1\nname: k\ndefault: keep\ncategories:\n  embedded: clean\n  location: fail\n", file: "k.yaml")
        XCTAssertEqual(policy.evaluate(cover)[0].disposition, .fail)
    }

    func testNestedFilesSettleInnermostFirst() throws {
        // A cover (0) whose trailer is a JPEG (1) holding only a kept Make (2): nothing to clean anywhere.
        let items = [item("id3:APIC", .embedded, embedded: "jpeg"), item("jpeg:trailer", .embedded, parent: 0, embedded: "jpeg"),
                     item("exif:Make", .device, parent: 1)]
        let policy = try PolicyLoader.load(yaml: "schema: 1\nname: k\ndefault: keep\ncategories:\n  embedded: clean\n", file: "k.yaml")
        XCTAssertEqual(policy.evaluate(items).map(\.disposition), [.keep, .keep, .keep])
        var gps = items
        gps.append(item("exif:GPSLatitude", .location, parent: 1))
        let location = try PolicyCatalog.builtin("location")
        XCTAssertEqual(location.evaluate(gps).map(\.disposition), [.clean, .clean, .keep, .remove])
    }

    func testUncleanableDecidesWhatACleanThatCannotBeDoneBecomes() throws {
        let failing = try PolicyLoader.load(yaml: "schema: 1\nname: k\ncategories:\n  embedded: clean\nuncleanable: fail\n", file: "k.yaml")
        XCTAssertEqual(failing.uncleanable, .fail)
        let thumbnail = failing.evaluate([item("exif:thumbnail", .embedded)])[0]
        XCTAssertEqual(thumbnail.disposition, .fail)
        XCTAssertTrue(thumbnail.rule.contains("can clean"), thumbnail.rule)
        XCTAssertEqual(try PolicyLoader.load(yaml: "schema: 1\nname: k\n", file: "k.yaml").uncleanable, .remove)
    }

    func testCleanIsValidatedWhereItMeansSomething() throws {
        XCTAssertEqual(try PolicyLoader.load(yaml: "schema: 1\nname: k\nkeys:\n  \"id3:APIC\": clean\n", file: "k.yaml").keys[KeyPattern("id3:APIC")], .clean)
        for (yaml, key) in [("categories:\n  location: clean\n", "categories.location"), ("default: clean\n", "default"),
                            ("unknown: clean\n", "unknown"), ("uncleanable: keep\n", "uncleanable")] {
            XCTAssertThrowsError(try PolicyLoader.load(yaml: "schema: 1\nname: k\n" + yaml, file: "k.yaml")) { error in
                guard case .policy(_, _, let named, _)? = error as? MetascrubError else { return XCTFail("\(error)") }
                XCTAssertEqual(named, key)
            }
        }
    }

    func testCleanedFindingsSurviveAndRoundTripInJSON() throws {
        XCTAssertTrue(Disposition.clean.survives)
        let finding = Finding(item: item("id3:APIC", .embedded, embedded: "jpeg"), disposition: .clean, rule: "r", outcome: .cleaned)
        XCTAssertEqual(finding.severity, .warning)
        let json = try JSONEncoder().encode(finding)
        XCTAssertTrue(String(decoding: json, as: UTF8.self).contains("\"embedded_format\":\"jpeg\""))
        let back = try JSONDecoder().decode(Finding.self, from: json)
        XCTAssertEqual(back, finding)
    }
}
