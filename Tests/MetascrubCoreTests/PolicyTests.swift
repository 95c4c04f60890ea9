// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import XCTest
@testable import MetascrubCore

final class PolicyTests: XCTestCase {
    private func item(_ key: String, _ category: MetascrubCore.Category, unknown: Bool = false, parent: Int? = nil) -> MetadataItem {
        MetadataItem(key: key, category: category, location: "test", isUnknown: unknown, parent: parent)
    }

    func testShippedPoliciesLoadAndMatchTheirFiles() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let files = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("policies").path).filter { $0.hasSuffix(".yaml") }.sorted()
        XCTAssertEqual(files.map { String($0.dropLast(5)) }, PolicyCatalog.names.sorted(), "run scripts/embed-policies")
        for name in PolicyCatalog.names {
            let onDisk = try String(contentsOf: root.appendingPathComponent("policies/\(name).yaml"), encoding: .utf8)
            XCTAssertEqual(PolicyCatalog.source(of: name), onDisk, "policies/\(name).yaml differs from the embedded copy: run scripts/embed-policies")
            let policy = try PolicyCatalog.builtin(name)
            XCTAssertEqual(policy.name, name)
            XCTAssertEqual(policy.digest, SHA256.hex(Array(onDisk.utf8)))
        }
        XCTAssertEqual(BuiltinPolicies.defaultName, "strict")
    }

    /// Issue 16: `convert:` needs `reencode: true`; `min-psnr:` is a number of decibels.
    func testConvertAndMinimumPSNRSettings() throws {
        let policy = try PolicyLoader.load(yaml: "schema: 1\nname: c\nreencode: true\nconvert: jpeg\nmin-psnr: 42.5\n", file: "c.yaml")
        XCTAssertEqual(policy.convert, .jpeg)
        XCTAssertEqual(policy.minimumPSNR, 42.5)
        let whole = try PolicyLoader.load(yaml: "schema: 1\nname: c\nmin-psnr: 38\n", file: "c.yaml")
        XCTAssertEqual(whole.minimumPSNR, 38)
        XCTAssertNil(whole.convert)
        XCTAssertEqual(whole.minimumPSNR == Policy.defaultMinimumPSNR, false)
        for shipped in ["strict", "share", "location"] {
            let p = try PolicyCatalog.builtin(shipped)
            XCTAssertFalse(p.allowReencode, shipped)
            XCTAssertNil(p.convert, shipped)
            XCTAssertEqual(p.minimumPSNR, Policy.defaultMinimumPSNR, shipped)
        }
        XCTAssertThrowsError(try PolicyLoader.load(yaml: "schema: 1\nname: c\nconvert: png\n", file: "c.yaml")) { error in
            XCTAssertTrue("\(error)".contains("reencode: true"), "\(error)")
        }
        XCTAssertThrowsError(try PolicyLoader.load(yaml: "schema: 1\nname: c\nreencode: true\nconvert: gif\n", file: "c.yaml"))
        XCTAssertThrowsError(try PolicyLoader.load(yaml: "schema: 1\nname: c\nmin-psnr: loud\n", file: "c.yaml"))
    }

    func testStrictKeepsOnlyRendering() throws {
        let strict = try PolicyCatalog.builtin("strict")
        XCTAssertEqual(strict.decide(item("exif:GPSLatitude", .location)).0, .remove)
        XCTAssertEqual(strict.decide(item("exif:ColorSpace", .structure)).0, .remove, "exif:* removes EXIF technical tags too")
        XCTAssertEqual(strict.decide(item("icc:profile", .rendering)).0, .keep)
        XCTAssertEqual(strict.decide(item("jpeg:Adobe", .rendering)).0, .keep)
        XCTAssertEqual(strict.decide(item("exif:Orientation", .rendering)).0, .bake)
        XCTAssertEqual(strict.decide(item("jpeg:APP12:Ducky", .content, unknown: true)).0, .remove)
    }

    func testShareKeepsAuthorshipButNotLocation() throws {
        let share = try PolicyCatalog.builtin("share")
        XCTAssertEqual(share.decide(item("exif:Copyright", .identity)).0, .keep)
        XCTAssertEqual(share.decide(item("xmp:dc:rights", .identity)).0, .keep)
        XCTAssertEqual(share.decide(item("xmp:xmpRights:UsageTerms", .identity)).0, .keep)
        XCTAssertEqual(share.decide(item("iptc:CopyrightNotice", .identity)).0, .keep)
        XCTAssertEqual(share.decide(item("exif:GPSLatitude", .location)).0, .remove)
        XCTAssertEqual(share.decide(item("xmp:Iptc4xmpCore:CreatorContactInfo", .identity)).0, .remove)
        XCTAssertEqual(share.decide(item("exif:BodySerialNumber", .device)).0, .remove)
    }

    func testLocationPolicyRemovesOnlyLocationAndEmbedded() throws {
        let location = try PolicyCatalog.builtin("location")
        XCTAssertEqual(location.decide(item("exif:GPSLatitude", .location)).0, .remove)
        XCTAssertEqual(location.decide(item("exif:ThumbnailImage", .embedded)).0, .remove)
        XCTAssertEqual(location.decide(item("exif:Make", .device)).0, .keep)
        XCTAssertEqual(location.decide(item("exif:Artist", .identity)).0, .keep)
        XCTAssertEqual(location.decide(item("exif:Orientation", .rendering)).0, .keep)
    }

    func testPrecedenceExactKeyBeatsGlobBeatsUnknownBeatsCategory() throws {
        let policy = try PolicyLoader.load(yaml: """
            schema: 1
            name: t
            default: keep
            unknown: fail
            categories:
              location: remove
            keys:
              "exif:GPS*": fail
              "exif:GPSAltitude": keep
              "*": remove
            """, file: "t.yaml")
        XCTAssertEqual(policy.decide(item("exif:GPSAltitude", .location)).0, .keep)
        XCTAssertEqual(policy.decide(item("exif:GPSLatitude", .location)).0, .fail)
        XCTAssertEqual(policy.decide(item("xmp:dc:title", .content)).0, .remove, "the catch-all glob still beats categories")
        let noGlob = try PolicyLoader.load(yaml: "schema: 1\nname: u\ndefault: keep\nunknown: fail\ncategories:\n  location: remove\n", file: "u.yaml")
        XCTAssertEqual(noGlob.decide(item("jpeg:APP9", .content, unknown: true)).0, .fail)
        XCTAssertEqual(noGlob.decide(item("exif:GPSLatitude", .location)).0, .remove)
        XCTAssertEqual(noGlob.decide(item("exif:Make", .device)).0, .keep)
    }

    func testBlocksAreRemovedWhenAnyItemInsideIsRemoved() throws {
        let policy = try PolicyLoader.load(yaml: "schema: 1\nname: t\ndefault: keep\ncategories:\n  identity: remove\n", file: "t.yaml")
        let findings = policy.evaluate([
            item("exif:MakerNote", .device),
            item("makernote:Canon.OwnerName", .identity, parent: 0),
            item("makernote:Canon.FirmwareVersion", .device, parent: 0),
        ])
        XCTAssertEqual(findings.map(\.disposition), [.remove, .remove, .remove])
        XCTAssertEqual(findings[0].rule, "contains makernote:Canon.OwnerName")
        XCTAssertEqual(findings[2].rule, "inside exif:MakerNote")
    }

    func testFailInsideABlockFailsTheBlock() throws {
        let policy = try PolicyLoader.load(yaml: "schema: 1\nname: t\ndefault: keep\nkeys:\n  \"makernote:*Serial*\": fail\n", file: "t.yaml")
        let findings = policy.evaluate([item("exif:MakerNote", .device), item("makernote:Canon.SerialNumber", .device, parent: 0)])
        XCTAssertEqual(findings[0].disposition, .fail)
    }

    func testValidationErrorsNameFileLineAndKey() {
        func error(_ yaml: String) -> MetascrubError? {
            do { _ = try PolicyLoader.load(yaml: yaml, file: "p.yaml"); return nil } catch { return error }
        }
        XCTAssertEqual(error("schema: 1\nname: x\ncategories:\n  locaton: remove\n"),
                       .policy(file: "p.yaml", line: 4, key: "categories.locaton",
                               message: "unknown category; expected one of location, device, identity, time, software, content, embedded, provenance, rendering, structure"))
        XCTAssertEqual(error("schema: 1\nname: x\ncategories:\n  location: delete\n"),
                       .policy(file: "p.yaml", line: 4, key: "categories.location", message: "must be keep, remove or fail"))
        XCTAssertEqual(error("schema: 2\nname: x\n")?.description,
                       "p.yaml:1: schema: version 2 is not supported; this metascrub reads version 1")
        XCTAssertEqual(error("name: x\n")?.description, "p.yaml:1: schema: missing; write `schema: 1` at the top")
        XCTAssertEqual(error("schema: 1\nname: x\nkeys:\n  GPSLatitude: remove\n")?.description.contains("p.yaml:4: keys.GPSLatitude: a key is namespaced"), true)
        XCTAssertEqual(error("schema: 1\nname: x\nfrobnicate: 1\n")?.description.hasPrefix("p.yaml:3: frobnicate: unknown setting"), true)
        XCTAssertEqual(error("schema: 1\nname: x\norientation: sideways\n")?.description,
                       "p.yaml:3: orientation: must be one of bake, rotate, keep, drop")
        XCTAssertNotNil(error("schema: 1\nname: [unclosed\n"))
    }

    func testKeyPatterns() {
        XCTAssertTrue(KeyPattern("exif:GPS*").matches("exif:GPSLatitude"))
        XCTAssertFalse(KeyPattern("exif:GPS*").matches("xmp:exif:GPSLatitude"))
        XCTAssertTrue(KeyPattern("*:Copyright").matches("exif:Copyright"))
        XCTAssertTrue(KeyPattern("xmp:dc:*").matches("xmp:dc:rights"))
        XCTAssertTrue(KeyPattern("exif:GPS?atitude").matches("exif:GPSLatitude"))
        XCTAssertFalse(KeyPattern("exif:Make").matches("exif:MakerNote"))
        XCTAssertGreaterThan(KeyPattern("exif:GPSLat*").specificity, KeyPattern("exif:*").specificity)
    }

    func testSHA256KnownAnswers() {
        XCTAssertEqual(SHA256.hex(Array("".utf8)), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        XCTAssertEqual(SHA256.hex(Array("abc".utf8)), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        let million = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
        XCTAssertEqual(SHA256.hex(million), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
        var streamed = SHA256()
        for chunk in stride(from: 0, to: million.count, by: 999) { streamed.update(million[chunk..<min(chunk + 999, million.count)]) }
        XCTAssertEqual(SHA256.hexString(streamed.finalize()), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }
}
