// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import MetascrubCore
@testable import MetascrubFormats
import XCTest

/// Hard bindings and signers read from the stores c2pa-python signs: `c2pa.hash.bmff` in HEIF, AVIF and MP4 is
/// computed (box exclusions, offsets of the top-level boxes), and the signer is the certificate's subject.
final class C2PABindingTests: XCTestCase {
    func provenance(_ bytes: [UInt8], _ name: String) throws -> [ProvenanceManifest] {
        let entry = try XCTUnwrap(FormatRegistry.detect(Array(bytes.prefix(Magic.headLength))), name)
        return try XCTUnwrap(entry.handler).scan(MemoryByteSource(bytes), options: ScanOptions()).provenance
    }

    func fixture(_ name: String) throws -> [UInt8] {
        try XCTUnwrap(FileManager.default.contents(atPath: Fixture.path("c2pa/\(name)")).map(Array.init), name)
    }

    /// Every signed fixture's binding holds, in every container, and names its signer.
    func testEverySignedFixtureBindsAndNamesItsSigner() throws {
        for name in ["signed.jpg", "signed.png", "signed.heic", "signed.mp4", "signed.webp", "signed.jxl",
                     "signed.avif", "signed-plain.jpg"] {
            let found = try provenance(try fixture(name), name)
            XCTAssertEqual(found.map(\.binding), [.valid], name)
            let active = found.first?.manifests.last
            XCTAssertEqual(active?.signer?.commonName, "CANARY-C2PA-SIGNER", name)
            XCTAssertEqual(active?.signer?.organization, "metascrub fixtures", name)
            XCTAssertEqual(active?.actions.first, "c2pa.created", name)
        }
    }

    /// One byte changed in the coded media (`mdat`), or a top-level box moved, breaks a BMFF binding.
    func testBMFFBindingBreaksOnAChangedByteOrAMovedBox() throws {
        for name in ["signed.heic", "signed.mp4", "signed.avif"] {
            let bytes = try fixture(name)
            let top = try BoxReader(MemoryByteSource(bytes), format: "test").topLevel().boxes
            let mdat = try XCTUnwrap(top.first { $0.type == "mdat" }, name)
            var changed = bytes
            changed[Int(mdat.payloadOffset) + 2] ^= 0x01
            XCTAssertEqual(try provenance(changed, name).map(\.binding), [.invalid], name)
            // A free box (excluded from the hash) inserted before the last box: every hashed byte is the same,
            // only the last box's offset differs, so only the hash over offsets can tell.
            let last = try XCTUnwrap(top.last)
            let free: [UInt8] = [0, 0, 0, 8] + Array("free".utf8)
            let moved = Array(bytes[..<Int(last.offset)]) + free + Array(bytes[Int(last.offset)...])
            XCTAssertEqual(try provenance(moved, name).map(\.binding), [.invalid], "\(name): moved box")
        }
    }

    /// The hashed sequence: excluded ranges skipped, each marked box start preceded by its offset.
    func testPartsInsertOffsetsBeforeMarkedBoxes() {
        let parts = C2PABMFFHash.parts(size: 100, excluded: [0..<10, 30..<40], markers: [10, 20, 40, 60])
        XCTAssertEqual(parts, [.offset(10), .bytes(10..<20), .offset(20), .bytes(20..<30),
                               .offset(40), .bytes(40..<60), .offset(60), .bytes(60..<100)])
        // A marker inside an excluded subset still counts when it lies between included bytes.
        XCTAssertEqual(C2PABMFFHash.parts(size: 50, excluded: [20..<30], markers: [0, 20]),
                       [.offset(0), .bytes(0..<20), .offset(20), .bytes(30..<50)])
    }
}
