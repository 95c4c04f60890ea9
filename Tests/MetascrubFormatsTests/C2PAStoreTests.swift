// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import MetascrubCore
@testable import MetascrubFormats
import XCTest

/// The manifest store reader under the C2PA scanners: the CBOR reader is strict (every length checked before it
/// is used), and the stores c2pa-python writes parse into their assertions with a hard binding that holds.
final class C2PAStoreTests: XCTestCase {
    func testCBORReadsWhatC2PAWrites() throws {
        // {"a": [1, -2, h'0102', "x"], "b": tag 0("t"), "c": 1.5 (half)}
        let bytes: [UInt8] = [0xA3, 0x61, 0x61, 0x84, 0x01, 0x21, 0x42, 0x01, 0x02, 0x61, 0x78,
                              0x61, 0x62, 0xC0, 0x61, 0x74, 0x61, 0x63, 0xF9, 0x3E, 0x00]
        let value = try CBORReader.decode(bytes, origin: 0, path: "test")
        let list = try XCTUnwrap(value["a"]?.array)
        XCTAssertEqual(list.map(\.integer), [1, -2, nil, nil])
        XCTAssertEqual(list[2].bytes, [1, 2])
        XCTAssertEqual(list[3].text, "x")
        XCTAssertEqual(value["b"]?.untagged.text, "t")
        if case .float(let f)? = value["c"] { XCTAssertEqual(f, 1.5) } else { XCTFail("half float") }
    }

    func testCBORRefusesWhatIsNotThere() {
        let hostile: [[UInt8]] = [
            [0x5A, 0xFF, 0xFF, 0xFF, 0xFF, 0x00],  // a 4 GB byte string in 6 bytes
            [0x9B, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF],  // 2^64-1 array elements
            [0xBA, 0x00, 0x10, 0x00, 0x00, 0x01],  // a million map pairs, one byte left
            [0x9F, 0x01, 0xFF],  // indefinite length
            [0x62, 0xC3, 0x28],  // text that is not UTF-8
            [0x01, 0x02],  // bytes after the item
            [0x18],  // argument cut off
            Array(repeating: 0x81, count: 100) + [0x01],  // nested past the bound
        ]
        for bytes in hostile {
            XCTAssertThrowsError(try CBORReader.decode(bytes, origin: 100, path: "test"), "\(bytes.prefix(8))") { error in
                guard case MetascrubError.malformed(_, _, let offset, _)? = error as? MetascrubError else {
                    return XCTFail("\(error)")
                }
                XCTAssertGreaterThanOrEqual(offset ?? 0, 100, "offsets are file offsets")
            }
        }
    }

    /// The signed JPEG's store, read from its APP11 segments: manifests, assertions and a binding that matches; a
    /// copy with one byte changed outside the manifest no longer matches.
    func testSignedJPEGBindingHoldsAndBreaks() throws {
        let path = Fixture.path("c2pa/signed.jpg")
        var bytes = try XCTUnwrap(FileManager.default.contents(atPath: path).map(Array.init))
        let scan = try JPEGFormat().scan(MemoryByteSource(bytes), options: ScanOptions())
        XCTAssertEqual(scan.provenance.map(\.binding), [.valid])
        let keys = Set(scan.items.map(\.key))
        for key in ["c2pa:manifest", "c2pa:c2pa.hash.data", "c2pa:stds.exif/exif:GPSLatitude", "c2pa:c2pa.thumbnail.claim"] {
            XCTAssertTrue(keys.contains(key), key)
        }
        // The last byte before EOI is entropy-coded data the binding covers.
        bytes[bytes.count - 3] ^= 0x01
        let broken = try JPEGFormat().scan(MemoryByteSource(bytes), options: ScanOptions())
        XCTAssertEqual(broken.provenance.map(\.binding), [.invalid])
    }

    /// Every C2PA fixture's store parses, wherever it lives (APP11, caBX, uuid box, jumb box, C2PA chunk).
    func testEveryContainerIsRead() throws {
        for name in ["signed.jpg", "signed.png", "signed.heic", "signed.mp4", "signed.webp", "signed.jxl", "signed.avif"] {
            let data = try XCTUnwrap(FileManager.default.contents(atPath: Fixture.path("c2pa/\(name)")))
            let entry = try XCTUnwrap(FormatRegistry.detect(Array(data.prefix(Magic.headLength))), name)
            let scan = try XCTUnwrap(entry.handler).scan(MemoryByteSource(Array(data)), options: ScanOptions())
            let keys = scan.items.map(\.key)
            XCTAssertTrue(keys.contains("c2pa:stds.schema-org.CreativeWork/locationCreated"), "\(name): \(keys)")
            XCTAssertFalse(scan.notes.contains { $0.code == "c2pa-unparsed" }, "\(name): \(scan.notes)")
        }
    }
}
