// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubCore
import MetascrubFormats
import XCTest

/// The capability table (`metascrub formats`) held to behaviour: for every format and every column it marks RW,
/// some committed fixture of that format has an item of that family, and a clean removes it (strict, with the
/// ICC profile removed too, which strict keeps for rendering).
final class CapabilityTableTests: XCTestCase {
    /// Columns with an item-level meaning. Text/Comments, Tags and Timed have none yet (a tag is text in one
    /// container and a key-value pair in another), so they are not checked here.
    static func families(of item: MetadataItem) -> Set<MetadataFamily> {
        var out: Set<MetadataFamily> = []
        if item.key.hasPrefix("exif:") { out.insert(.exif) }
        if item.key.hasPrefix("xmp:") { out.insert(.xmp) }
        if item.key.hasPrefix("iptc:") { out.insert(.iptc) }
        if item.key == "icc:profile" { out.insert(.icc) }
        if item.key.hasSuffix(":trailer") { out.insert(.trailer) }
        if item.category == .embedded { out.insert(.embedded) }
        return out
    }

    static let checked: [MetadataFamily] = [.exif, .xmp, .iptc, .icc, .embedded, .trailer]

    /// RW claims no fixture demonstrates yet ("format/column"). Each is a fixture to add to scripts/make-fixtures
    /// (or a claim to withdraw); the test fails when one is closed so this list only shrinks.
    static let knownGaps: Set<String> = [
        "avif/ICC", "avif/Trailer", "heif/ICC", "mov/XMP", "mov/Embedded", "mov/Trailer",
        "mp4/Trailer", "avi/XMP", "wav/Trailer", "aiff/XMP", "aiff/Trailer", "flac/Trailer", "mp3/Trailer",
        // Attachments and cover streams through libavformat: none of the muxers Debian's FFmpeg writes for the
        // fixture containers (FLV, PS, NUT, MXF, CAF, WavPack) stores one.
        "avformat/Embedded",
        // Camera raws other than DNG: the CR2 stub, the CR3 and RAF skeletons are cleaned without decoding (a
        // `damaged input` note) and cover EXIF (and the CR3's XMP); raw/olympus.orf covers ORF's EXIF, XMP and IPTC,
        // raw/panasonic.rw2 every RW2 column.
        // The rest share the DNG's code, which raw/canon.dng demonstrates.
        "cr2/Embedded", "cr2/IPTC", "cr2/XMP", "cr3/Embedded", "orf/Embedded", "raf/Embedded", "raf/XMP",
    ]

    /// Strict, and the ICC profile goes too.
    static func everything() throws -> Policy {
        let strict = BuiltinPolicies.sources.first { $0.name == "strict" }!.yaml
        return try PolicyLoader.load(yaml: strict.replacingOccurrences(of: "keys:\n", with: "keys:\n  \"icc:profile\": remove\n"),
                                     file: "everything.yaml")
    }

    func testEveryRemovableColumnHasAFixtureWhereItIsFoundAndRemoved() throws {
        let dir = TempDir()
        let policy = try Self.everything()
        var removed: [String: Set<MetadataFamily>] = [:]
        var cleaned = 0
        let skipped: Set<String> = ["bad", "fuzz", "golden", "workflow"]
        let files = FileManager.default.enumerator(atPath: Fixture.root.path)?.allObjects as? [String] ?? []
        for relative in files.sorted() where !skipped.contains(String(relative.split(separator: "/").first ?? "")) {
            let path = Fixture.path(relative)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue,
                  let handle = FileHandle(forReadingAtPath: path) else { continue }
            let head = [UInt8](handle.readData(ofLength: Magic.headLength))
            try handle.close()
            guard let entry = FormatRegistry.detect(head), entry.handler != nil else { continue }
            let report = Run.clean(path, to: dir.file(relative.replacingOccurrences(of: "/", with: "_")), policy: policy)
            guard report.status == .cleaned else { continue }
            cleaned += 1
            for finding in report.findings where finding.outcome == .removed {
                removed[entry.format.id, default: []].formUnion(Self.families(of: finding.item))
            }
        }
        XCTAssertGreaterThan(cleaned, 60, "too few fixtures were cleaned for the table to be judged")
        var gaps: Set<String> = []
        for entry in FormatRegistry.entries where entry.handler != nil {
            for family in Self.checked where entry.capabilities[family] == .remove {
                if !(removed[entry.format.id] ?? []).contains(family) { gaps.insert("\(entry.format.id)/\(family.rawValue)") }
            }
        }
        XCTAssertEqual(gaps.subtracting(Self.knownGaps).sorted(), [], "RW in the table but no fixture where it is found and removed")
        XCTAssertEqual(Self.knownGaps.subtracting(gaps).sorted(), [], "gaps closed by a fixture: take them off knownGaps")
    }
}
