// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
@testable import MetascrubFormats
import XCTest

/// The box reader/writer shared by HEIF, JPEG XL and (later) MP4: sizes, bounds, limits, typed errors.
final class ISOBMFFTests: XCTestCase {
    func box(_ type: String, _ payload: [UInt8]) -> [UInt8] { BoxWriter.box(FourCC(type), payload) }

    func testCompactLargeToEndAndUUIDHeaders() throws {
        let uuid = BoxUUID.xmp
        var file = box("ftyp", Array("heic\0\0\0\0mif1".utf8))
        file += [0, 0, 0, 1] + Array("free".utf8) + [0, 0, 0, 0, 0, 0, 0, 20] + [1, 2, 3, 4] // largesize 20
        file += BoxWriter.box("uuid", [9, 9], extendedType: uuid)
        file += [0, 0, 0, 0] + Array("mdat".utf8) + [7, 7, 7] // size 0: to the end of the file
        let listing = try BoxReader(MemoryByteSource(file), format: "test").topLevel()
        XCTAssertNil(listing.leftover)
        XCTAssertEqual(listing.boxes.map(\.type.description), ["ftyp", "free", "uuid", "mdat"])
        let free = listing.boxes[1], uuidBox = listing.boxes[2], mdat = listing.boxes[3]
        XCTAssertEqual(free.sizeForm, .large)
        XCTAssertEqual(free.headerSize, 16)
        XCTAssertEqual(free.payloadSize, 4)
        XCTAssertEqual(uuidBox.extendedType, uuid)
        XCTAssertEqual(uuidBox.headerSize, 24)
        XCTAssertEqual(uuidBox.payloadSize, 2)
        XCTAssertEqual(mdat.sizeForm, .toEnd)
        XCTAssertEqual(mdat.end, Int64(file.count))
        XCTAssertEqual(mdat.payloadSize, 3)
    }

    func testBytesAfterTheLastBoxAreATrailer() throws {
        let file = box("ftyp", Array("heic\0\0\0\0".utf8)) + [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, 0x4A, 0x46, 0x49, 0x46]
        let listing = try BoxReader(MemoryByteSource(file), format: "test").topLevel()
        XCTAssertEqual(listing.boxes.count, 1)
        XCTAssertEqual(listing.leftover, 16..<Int64(file.count))
        let short = box("ftyp", Array("heic\0\0\0\0".utf8)) + [1, 2, 3]
        XCTAssertEqual(try BoxReader(MemoryByteSource(short), format: "test").topLevel().leftover, 16..<19)
    }

    func testTruncatedTopLevelBoxIsATypedErrorWithPathAndOffset() {
        let file = box("ftyp", Array("heic\0\0\0\0".utf8)) + [0, 0, 1, 0] + Array("mdat".utf8) + [1, 2, 3]
        XCTAssertThrowsError(try BoxReader(MemoryByteSource(file), format: "HEIF").topLevel()) { error in
            guard case MetascrubError.truncated(let format, let path, let offset, let needed)? = error as? MetascrubError else {
                return XCTFail("\(error)")
            }
            XCTAssertEqual(format, "HEIF")
            XCTAssertEqual(path, "mdat")
            XCTAssertEqual(offset, 16)
            XCTAssertEqual(needed, 256 - 11)
        }
    }

    func testChildrenAreBoundedByTheirParent() throws {
        // iprp claims 24 bytes; its child claims 40.
        let child = [0, 0, 0, 40] + Array("ipco".utf8) + [UInt8](repeating: 0, count: 8)
        let iprp = [0, 0, 0, 24] + Array("iprp".utf8) + child
        let file = iprp + [UInt8](repeating: 0, count: 40)
        let reader = BoxReader(MemoryByteSource(file), format: "HEIF")
        let parent = try XCTUnwrap(reader.topLevel().boxes.first)
        XCTAssertThrowsError(try reader.children(of: parent, depth: 1)) { error in
            guard case MetascrubError.malformed(_, let path, let offset, _)? = error as? MetascrubError else { return XCTFail("\(error)") }
            XCTAssertEqual(path, "iprp/ipco")
            XCTAssertEqual(offset, 8)
        }
    }

    func testSizeSmallerThanAHeaderInsideABoxIsMalformed() throws {
        let file = box("meta", [0, 0, 0, 0] + [0, 0, 0, 4] + Array("hdlr".utf8))
        let reader = BoxReader(MemoryByteSource(file), format: "HEIF")
        let meta = try XCTUnwrap(reader.topLevel().boxes.first)
        XCTAssertThrowsError(try reader.children(of: meta, skip: 4, depth: 1)) { error in
            XCTAssertEqual((error as? MetascrubError)?.code, "malformed")
        }
    }

    func testDepthAndCountLimits() throws {
        let reader = BoxReader(MemoryByteSource(box("moov", box("trak", []))), format: "MP4", limits: BoxLimits(maxDepth: 1, maxBoxesPerContainer: 2))
        let moov = try XCTUnwrap(reader.topLevel().boxes.first)
        XCTAssertThrowsError(try reader.children(of: moov, depth: 2)) { error in
            XCTAssertEqual((error as? MetascrubError)?.code, "limit-exceeded")
        }
        let many = (0..<3).flatMap { _ in box("free", []) }
        XCTAssertThrowsError(try BoxReader(MemoryByteSource(many), format: "MP4", limits: BoxLimits(maxBoxesPerContainer: 2)).topLevel()) { error in
            XCTAssertEqual((error as? MetascrubError)?.code, "limit-exceeded")
        }
        let big = BoxReader(MemoryByteSource(box("meta", [UInt8](repeating: 0, count: 64))), format: "HEIF", limits: BoxLimits(maxPayloadRead: 16))
        XCTAssertThrowsError(try big.payload(of: big.topLevel().boxes[0]))
    }

    func testFullBoxHeaderAndCursorErrors() throws {
        let file = box("pitm", [1, 0, 0, 3] + [0, 0])
        let reader = BoxReader(MemoryByteSource(file), format: "HEIF")
        let pitm = try XCTUnwrap(reader.topLevel().boxes.first)
        let (version, flags) = try reader.fullBoxHeader(of: pitm)
        XCTAssertEqual(version, 1)
        XCTAssertEqual(flags, 3)
        var cursor = ByteCursor(try reader.payload(of: pitm), origin: pitm.payloadOffset, format: "HEIF", path: pitm.path)
        _ = try cursor.fullBoxHeader()
        XCTAssertThrowsError(try cursor.u32("item_ID")) { error in
            guard case MetascrubError.malformed(_, let path, let offset, _)? = error as? MetascrubError else { return XCTFail("\(error)") }
            XCTAssertEqual(path, "pitm")
            XCTAssertEqual(offset, 12)
        }
    }

    func testWriterUsesLargeSizeOnlyWhenNeededOrAsked() {
        XCTAssertEqual(BoxWriter.header("mdat", payloadSize: 4), [0, 0, 0, 12] + Array("mdat".utf8))
        XCTAssertEqual(BoxWriter.header("mdat", payloadSize: 4, preferLarge: true), [0, 0, 0, 1] + Array("mdat".utf8) + [0, 0, 0, 0, 0, 0, 0, 20])
        let huge = Int64(UInt32.max)
        XCTAssertEqual(BoxWriter.headerSize(payloadSize: huge), 16)
        XCTAssertEqual(BoxWriter.header("mdat", payloadSize: huge).count, 16)
    }

    func testSpliceCutsReplacesAndMapsOffsets() throws {
        // 100..<200 with 110..<120 cut, 150..<160 replaced by 3 bytes.
        let splice = try ByteSplice(range: 100..<200, cuts: [110..<120, 90..<105], replacements: [(150..<160, [1, 2, 3])])
        let source = MemoryByteSource((0..<200).map { UInt8($0) })
        XCTAssertEqual(try splice.plan.materialise(from: source), Array(105..<110) + Array(120..<150) + [1, 2, 3] + Array(160..<200))
        XCTAssertEqual(splice.newCount, 5 + 30 + 3 + 40)
        XCTAssertEqual(splice.map(120..<130), 5..<15)
        XCTAssertEqual(splice.map(150..<160), 35..<38)
        XCTAssertEqual(splice.map(170..<180), 48..<58)
        XCTAssertNil(splice.map(108..<122), "a range straddling a cut has no new place")
        XCTAssertNil(splice.map(112..<114))
        XCTAssertThrowsError(try ByteSplice(range: 0..<10, cuts: [], replacements: [(2..<5, [0]), (4..<6, [0])]))
        XCTAssertThrowsError(try ByteSplice(range: 0..<10, cuts: [], replacements: [(8..<12, [0])]))
    }

    func testRangeUnionAndSubtract() {
        XCTAssertEqual(ByteSplice.union([5..<8, 0..<2, 1..<3, 8..<9, 4..<4]), [0..<3, 5..<9])
        XCTAssertEqual(ByteSplice.subtract([0..<10], [2..<3, 5..<7]), [0..<2, 3..<5, 7..<10])
        XCTAssertEqual(ByteSplice.subtract([0..<10], [0..<10]), [])
    }

    func testItemLocationsRoundTripEveryVersionAndFieldSize() throws {
        for version in [UInt8(0), 1, 2] {
            for (offsetSize, lengthSize, baseSize, indexSize) in [(4, 4, 0, 0), (8, 8, 8, 0), (0, 4, 4, 0), (4, 4, 4, 4)] {
                let index = version == 0 ? 0 : indexSize
                let iloc = ItemLocationBox(
                    version: version, offsetSize: offsetSize, lengthSize: lengthSize, baseOffsetSize: baseSize, indexSize: index,
                    entries: [
                        .init(itemID: 1, constructionMethod: 0, dataReferenceIndex: 0, baseOffset: baseSize > 0 ? 1000 : 0,
                              extents: [.init(index: index > 0 ? 3 : 0, offset: offsetSize > 0 ? 12 : 0, length: 34)]),
                        .init(itemID: version == 2 ? 70000 : 2, constructionMethod: version == 0 ? 0 : 1, dataReferenceIndex: 0, baseOffset: 0,
                              extents: [.init(index: 0, offset: 0, length: 5), .init(index: 0, offset: offsetSize > 0 ? 5 : 0, length: 6)]),
                    ])
                let bytes = iloc.fitted().serialize()
                let box = try XCTUnwrap(BoxReader(MemoryByteSource(bytes), format: "HEIF").topLevel().boxes.first)
                let parsed = try ItemLocationBox.parse(Array(bytes[8...]), box: box, format: "HEIF")
                XCTAssertEqual(parsed.entries, iloc.entries, "version \(version) sizes \(offsetSize)/\(lengthSize)/\(baseSize)/\(index)")
                XCTAssertEqual(parsed.version, iloc.fitted().version)
            }
        }
    }

    func testItemLocationsWidenFieldsThatNoLongerFit() {
        let iloc = ItemLocationBox(version: 0, offsetSize: 4, lengthSize: 0, baseOffsetSize: 0, indexSize: 0,
                                   entries: [.init(itemID: 1, constructionMethod: 1, dataReferenceIndex: 0, baseOffset: 0,
                                                   extents: [.init(index: 0, offset: 1 << 33, length: 7)])])
        let fitted = iloc.fitted()
        XCTAssertEqual(fitted.offsetSize, 8)
        XCTAssertEqual(fitted.lengthSize, 4)
        XCTAssertEqual(fitted.version, 1, "construction method 1 needs version 1")
    }

    func testBadFieldSizesAreMalformed() throws {
        let bytes = BoxWriter.fullBox("iloc", version: 1, flags: 0, [0x33, 0x00, 0, 0])
        let box = try XCTUnwrap(BoxReader(MemoryByteSource(bytes), format: "HEIF").topLevel().boxes.first)
        XCTAssertThrowsError(try ItemLocationBox.parse(Array(bytes[8...]), box: box, format: "HEIF")) { error in
            XCTAssertEqual((error as? MetascrubError)?.code, "malformed")
        }
    }

    func testReferencesAndAssociationsRoundTrip() throws {
        let refs = ItemReferenceBox(version: 0, references: [.init(type: "dimg", from: 2, to: [1, 3]), .init(type: "cdsc", from: 5, to: [2])])
        let bytes = try XCTUnwrap(refs.serialize())
        let reader = BoxReader(MemoryByteSource(bytes), format: "HEIF")
        XCTAssertEqual(try ItemReferenceBox.parse(reader.topLevel().boxes[0], reader: reader), refs)
        XCTAssertNil(ItemReferenceBox(version: 0, references: []).serialize())

        let ipma = ItemPropertyAssociationBox(version: 0, flags: 0, entries: [
            .init(id: 1, associations: [.init(index: 1, essential: true), .init(index: 2, essential: false)]),
            .init(id: 2, associations: [.init(index: 200, essential: true)]),
        ])
        let ipmaBytes = ipma.serialize()
        let ipmaBox = try XCTUnwrap(BoxReader(MemoryByteSource(ipmaBytes), format: "HEIF").topLevel().boxes.first)
        let parsed = try ItemPropertyAssociationBox.parse(Array(ipmaBytes[8...]), box: ipmaBox, format: "HEIF")
        XCTAssertEqual(parsed.entries, ipma.entries)
        XCTAssertEqual(parsed.flags & 1, 1, "an index above 127 needs 15-bit indices")
    }

    func testFourCC() {
        XCTAssertEqual(FourCC("ftyp").bytes, Array("ftyp".utf8))
        XCTAssertEqual(FourCC("©xyz").bytes, [0xA9, 0x78, 0x79, 0x7A])
        XCTAssertTrue(FourCC("©xyz").isPrintable)
        XCTAssertFalse(FourCC(bytes: [0, 0x10, 0x4A, 0x46]).isPrintable)
        XCTAssertEqual(FourCC(bytes: [0, 0x10, 0x4A, 0x46]).description, "..JF")
    }
}
