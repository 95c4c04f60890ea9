// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
@testable import Metascrub
import MetascrubCore
import MetascrubFormats
import XCTest

/// The residue proof over a kept block the clean rebuilt without something (a dataset of a kept IPTC block, an
/// address field of a kept XMP structure): what was removed from inside is searched inside the rebuilt block too,
/// so a rebuild that left it there (and a scanner blind to it in the output) fails the clean.
final class RebuiltBlockResidueTests: XCTestCase {
    let secret = Array("CANARY-INNER-PLACE 48.8584".utf8)

    /// A 200-byte original: a kept block at 90..<140 holding the secret at 100.
    func original() -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 200)
        bytes.replaceSubrange(100..<100 + secret.count, with: secret)
        return bytes
    }

    func proof(_ findings: [Finding], cleaned: [UInt8], kept: [Range<Int64>], untouched: [Range<Int64>])
        throws -> [ResidueProof.Residue] {
        try ResidueProof(roles: ItemRoles(items: findings.map(\.item), findings: findings))
            .residues(original: MemoryByteSource(original()), cleaned: MemoryByteSource(cleaned), keptInOutput: kept,
                      keptUntouchedInOutput: untouched)
    }

    /// A child with its own bytes (an IPTC dataset) removed from a kept block: found when the rebuild left it,
    /// not when the rebuild took it out.
    func testRemovedDatasetLeftInsideItsKeptBlockIsResidue() throws {
        let block = MetadataItem(key: "exif:IPTC/NAA", category: .content, location: "IFD0/0x83BB", offset: 90,
                                 length: 50)
        var dataset = MetadataItem(key: "iptc:Caption-Abstract", category: .location, location: "IFD0/0x83BB/2:120",
                                   offset: 100, length: Int64(secret.count))
        dataset.parent = 0
        let findings = [Finding(item: block, disposition: .keep, rule: "kept"),
                        Finding(item: dataset, disposition: .remove, rule: "location")]
        // The output's scan lists the block as kept; being the block rebuilt, it excuses nothing removed from it.
        let left = try proof(findings, cleaned: original(), kept: [90..<140], untouched: [])
        XCTAssertEqual(left.map(\.key), ["iptc:Caption-Abstract"])
        XCTAssertEqual(left.first?.offset, 100)
        var rebuilt = original()
        rebuilt.replaceSubrange(100..<100 + secret.count, with: [UInt8](repeating: 0x20, count: secret.count))
        XCTAssertEqual(try proof(findings, cleaned: rebuilt, kept: [90..<140], untouched: []), [])
    }

    /// A child known only by its value (an XMP field at its packet's offset) removed from a kept structure whose
    /// rendered value holds it: the parent's value is no evidence for the child, so the child's text is searched.
    func testRemovedFieldOfAKeptStructureIsSearchedDespiteTheParentsValue() throws {
        var structure = MetadataItem(key: "xmp:plus:Licensor", category: .identity, location: "XMP/plus:Licensor",
                                     offset: 90, length: 0)
        structure.value = "{\"plus:LicensorName\":\"Studio\",\"plus:LicensorCity\":\"CANARY-INNER-PLACE 48.8584\"}"
        var city = MetadataItem(key: "xmp:plus:Licensor/plus:LicensorCity", category: .location,
                                location: "XMP/plus:Licensor/plus:LicensorCity", offset: 90, length: 0)
        city.value = String(decoding: secret, as: UTF8.self)
        city.parent = 0
        let findings = [Finding(item: structure, disposition: .keep, rule: "kept"),
                        Finding(item: city, disposition: .remove, rule: "location")]
        XCTAssertEqual(try proof(findings, cleaned: original(), kept: [90..<140], untouched: []).map(\.key),
                       ["xmp:plus:Licensor/plus:LicensorCity"])
    }

    /// End to end: under `location` a licensor is kept for its name and rebuilt without its address. A cleaner
    /// that leaves the city in (and a re-scan blind to it) must fail the clean, because the licensor's own kept
    /// value, which names the city, is no longer taken as the city's excuse.
    func testCityLeftInARebuiltLicensorFailsTheClean() async throws {
        let dir = EngineFixture.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let input = dir + "/licensor.jpg"
        try FileManager.default.copyItem(atPath: EngineFixture.path("leaks/licensor-address.jpg"), toPath: input)
        let original = FileManager.default.contents(atPath: input)
        var options = ProcessingOptions(policy: try PolicyCatalog.builtin("location"))
        options.formats = try ResidueProofTests.forgetful("xmp:plus:Licensor/plus:LicensorCity", for: input)
        let report = await Engine(options: options, jobs: 1).clean([input], output: .inPlace)
        let file = try XCTUnwrap(report.files.first)
        XCTAssertEqual(file.error?.code, "verification-failed", file.error?.message ?? "\(file.status)")
        XCTAssertTrue(file.error?.message.contains("xmp:plus:Licensor/plus:LicensorCity at byte") ?? false,
                      file.error?.message ?? "")
        XCTAssertFalse(file.error?.message.contains("CANARY") ?? true, "a value reached the report")
        XCTAssertEqual(FileManager.default.contents(atPath: input), original, "the original changed")

        // The same clean with a cleaner that does its job passes.
        let fine = await Engine(options: ProcessingOptions(policy: try PolicyCatalog.builtin("location")), jobs: 1)
            .clean([input], output: .file(dir + "/out.jpg"))
        XCTAssertEqual(fine.files.first?.status, .cleaned, fine.files.first?.error?.message ?? "")
    }
}
