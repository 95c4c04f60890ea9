import Foundation
import XCTest

@testable import MetascrubNative

final class MetascrubNativeTests: XCTestCase {
    // MARK: - Helpers

    private var tempDir: URL!

    override func setUpWithError() throws {
        tempDir = FileManager.default.temporaryDirectory
            .appendingPathComponent("metascrub-native-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: tempDir, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        if let tempDir { try? FileManager.default.removeItem(at: tempDir) }
    }

    /// Runs ImageMagick's `convert` with `arguments` (the last one is the output file name in tempDir).
    private func imageMagick(_ arguments: [String], output: String) throws -> [UInt8] {
        let convert = "/usr/bin/convert"
        guard FileManager.default.isExecutableFile(atPath: convert) else {
            // The oracle missing is a failure, not a pass: scripts/install-deps installs it.
            XCTFail("ImageMagick's convert is not installed")
            throw CocoaError(.fileNoSuchFile)
        }
        let path = tempDir.appendingPathComponent(output).path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: convert)
        process.arguments = arguments + [path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "convert \(arguments) failed")
        return try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
    }

    private func gradientJPEG(width: Int, height: Int, sampling: String, comment: String? = nil) throws -> [UInt8] {
        var arguments = ["-size", "\(width)x\(height)", "gradient:red-blue", "-sampling-factor", sampling, "-quality", "85"]
        if let comment { arguments += ["-set", "comment", comment] }
        return try imageMagick(arguments, output: "g-\(width)x\(height)-\(sampling).jpg")
    }

    // MARK: - LosslessJPEG

    func testHeader() throws {
        let jpeg = try gradientJPEG(width: 48, height: 32, sampling: "2x2")
        let header = try LosslessJPEG.header(jpeg)
        XCTAssertEqual(header.width, 48)
        XCTAssertEqual(header.height, 32)
        XCTAssertEqual(header.subsampling, 2)  // TJSAMP_420
        XCTAssertEqual(header.mcuSize.width, 16)
        XCTAssertEqual(header.mcuSize.height, 16)
    }

    func testRotate90ThenRotate270IsPixelIdentical() throws {
        for sampling in ["1x1", "2x2", "2x1"] {
            let jpeg = try gradientJPEG(width: 48, height: 32, sampling: sampling)
            let original = try LosslessJPEG.decodeRGB(jpeg)
            let rotated = try LosslessJPEG.transform(jpeg, .rotate90)
            let rotatedHeader = try LosslessJPEG.header(rotated)
            XCTAssertEqual(rotatedHeader.width, 32, sampling)
            XCTAssertEqual(rotatedHeader.height, 48, sampling)
            let back = try LosslessJPEG.transform(rotated, .rotate270)
            let decoded = try LosslessJPEG.decodeRGB(back)
            XCTAssertEqual(decoded.width, original.width, sampling)
            XCTAssertEqual(decoded.height, original.height, sampling)
            XCTAssertTrue(decoded.pixels == original.pixels, "round trip changed pixels (\(sampling))")
        }
    }

    func testRotate90MovesPixelsFor444() throws {
        // The coefficients are moved exactly (the output is byte-identical to `jpegtran -perfect -rotate 90`),
        // but libjpeg's integer IDCT is not exactly transpose-symmetric, so decoded pixels may differ by a
        // rounding step from a pixel rotation of the decoded original.
        let jpeg = try gradientJPEG(width: 48, height: 32, sampling: "1x1")
        let src = try LosslessJPEG.decodeRGB(jpeg)
        let dst = try LosslessJPEG.decodeRGB(try LosslessJPEG.transform(jpeg, .rotate90))
        XCTAssertEqual(dst.width, src.height)
        XCTAssertEqual(dst.height, src.width)
        var maxDiff = 0
        for y in 0..<src.height {
            for x in 0..<src.width {
                // Clockwise: source (x, y) lands at (H - 1 - y, x).
                let s = (y * src.width + x) * 3
                let d = (x * dst.width + (src.height - 1 - y)) * 3
                for c in 0..<3 { maxDiff = max(maxDiff, abs(Int(src.pixels[s + c]) - Int(dst.pixels[d + c]))) }
            }
        }
        XCTAssertLessThanOrEqual(maxDiff, 3)
    }

    func testDoubleTransformsAreIdentity() throws {
        let jpeg = try gradientJPEG(width: 48, height: 32, sampling: "2x2")
        let original = try LosslessJPEG.decodeRGB(jpeg).pixels
        for t in [LosslessJPEG.Transform.flipHorizontal, .flipVertical, .transpose, .transverse, .rotate180] {
            let twice = try LosslessJPEG.transform(try LosslessJPEG.transform(jpeg, t), t)
            XCTAssertTrue(try LosslessJPEG.decodeRGB(twice).pixels == original, "\(t) twice")
        }
    }

    func testEveryTransformIsPerfectOnWholeMCUs() throws {
        let jpeg = try gradientJPEG(width: 48, height: 32, sampling: "2x2")
        for t in LosslessJPEG.Transform.allCases {
            let out = try LosslessJPEG.transform(jpeg, t)
            let header = try LosslessJPEG.header(out)
            let swaps = [.transpose, .transverse, .rotate90, .rotate270].contains(t)
            XCTAssertEqual(header.width, swaps ? 32 : 48, "\(t)")
            XCTAssertEqual(header.height, swaps ? 48 : 32, "\(t)")
        }
    }

    func testPartialMCUThrowsImperfect() throws {
        let jpeg = try gradientJPEG(width: 45, height: 29, sampling: "2x2")
        for t in [LosslessJPEG.Transform.rotate90, .rotate180, .rotate270, .flipHorizontal, .flipVertical, .transverse] {
            XCTAssertThrowsError(try LosslessJPEG.transform(jpeg, t), "\(t)") { error in
                XCTAssertEqual(error as? LosslessJPEGError, .imperfect(width: 45, height: 29), "\(t): \(error)")
            }
        }
        // Transpose never needs edge blocks moved to the other side, so libjpeg-turbo calls it perfect.
        XCTAssertNoThrow(try LosslessJPEG.transform(jpeg, .transpose))
    }

    func testTransformCopiesNoMarkers() throws {
        let secret = "SECRET-COMMENT-4711"
        let jpeg = try gradientJPEG(width: 48, height: 32, sampling: "2x2", comment: secret)
        XCTAssertTrue(contains(jpeg, Array(secret.utf8)), "fixture should carry the comment")
        let out = try LosslessJPEG.transform(jpeg, .rotate180)
        XCTAssertFalse(contains(out, Array(secret.utf8)))
        XCTAssertFalse(hasMarker(out, 0xFE), "COM marker copied")
        XCTAssertFalse(hasMarker(out, 0xE1), "APP1 marker copied")
    }

    func testJPEGGarbageThrowsNativeError() {
        XCTAssertThrowsError(try LosslessJPEG.header([0xFF, 0xD8, 0x00, 0x01])) { error in
            XCTAssertTrue(error is NativeError, "\(error)")
            XCTAssertTrue("\(error)".hasPrefix("libturbojpeg: "), "\(error)")
        }
        XCTAssertThrowsError(try LosslessJPEG.transform([], .rotate90)) { XCTAssertTrue($0 is NativeError) }
        XCTAssertThrowsError(try LosslessJPEG.decodeRGB(Array("not a jpeg".utf8))) { XCTAssertTrue($0 is NativeError) }
    }

    // MARK: - ExifTagNames

    func testExifTagNames() {
        let gpsPointer = ExifTagNames.name(tag: 0x8825, ifd: .ifd0)
        XCTAssertNotNil(gpsPointer)
        XCTAssertTrue(gpsPointer?.hasPrefix("GPSInfo") ?? false, gpsPointer ?? "nil")
        XCTAssertEqual(ExifTagNames.name(tag: 0x0002, ifd: .gps), "GPSLatitude")
        XCTAssertEqual(ExifTagNames.name(tag: 0x0004, ifd: .gps), "GPSLongitude")
        XCTAssertEqual(ExifTagNames.name(tag: 0x9003, ifd: .exif), "DateTimeOriginal")
        XCTAssertEqual(ExifTagNames.name(tag: 0x010F, ifd: .ifd0), "Make")
        XCTAssertEqual(ExifTagNames.name(tag: 0xA431, ifd: .exif), "BodySerialNumber")
        XCTAssertEqual(ExifTagNames.name(tag: 0x0001, ifd: .interoperability), "InteroperabilityIndex")
        XCTAssertNil(ExifTagNames.name(tag: 0xBEEF, ifd: .ifd0))
        XCTAssertEqual(ExifTagNames.nameInAnyIFD(tag: 0x9003), "DateTimeOriginal")
    }

    // MARK: - Exiv2

    static let xmpPacket = """
        <?xpacket begin="\u{FEFF}" id="W5M0MpCehiHzreSzNTczkc9d"?>
        <x:xmpmeta xmlns:x="adobe:ns:meta/">
         <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
          <rdf:Description rdf:about=""
            xmlns:dc="http://purl.org/dc/elements/1.1/"
            xmlns:xmp="http://ns.adobe.com/xap/1.0/"
            xmlns:xmpMM="http://ns.adobe.com/xap/1.0/mm/"
            xmlns:stEvt="http://ns.adobe.com/xap/1.0/sType/ResourceEvent#"
            xmp:CreatorTool="SecretTool 9">
           <dc:rights><rdf:Alt><rdf:li xml:lang="x-default">(c) Jane Doe</rdf:li></rdf:Alt></dc:rights>
           <dc:creator><rdf:Seq><rdf:li>Jane Doe</rdf:li><rdf:li>John Roe</rdf:li></rdf:Seq></dc:creator>
           <xmpMM:History><rdf:Seq>
            <rdf:li rdf:parseType="Resource"><stEvt:action>saved</stEvt:action><stEvt:softwareAgent>SecretTool 9</stEvt:softwareAgent></rdf:li>
            <rdf:li rdf:parseType="Resource"><stEvt:action>converted</stEvt:action></rdf:li>
           </rdf:Seq></xmpMM:History>
          </rdf:Description>
         </rdf:RDF>
        </x:xmpmeta>
        <?xpacket end="w"?>
        """

    func testDecodeXMP() throws {
        let tags = try Exiv2.decodeXMP(packet: Array(Self.xmpPacket.utf8))
        let keys = Set(tags.map(\.key))
        XCTAssertTrue(keys.contains("Xmp.dc.rights"), "\(keys)")
        XCTAssertTrue(keys.contains("Xmp.dc.creator"), "\(keys)")
        XCTAssertTrue(keys.contains("Xmp.xmp.CreatorTool"), "\(keys)")
        XCTAssertTrue(keys.contains("Xmp.xmpMM.History[1]/stEvt:action"), "\(keys)")
        let rights = try XCTUnwrap(tags.first { $0.key == "Xmp.dc.rights" })
        XCTAssertEqual(rights.group, "dc")
        XCTAssertEqual(rights.name, "rights")
        XCTAssertTrue(rights.value.contains("(c) Jane Doe"), rights.value)
        XCTAssertFalse(rights.typeName.isEmpty)
    }

    func testFilterXMPKeepsOnlyAskedKeys() throws {
        let packet = Array(Self.xmpPacket.utf8)
        let filtered = try XCTUnwrap(try Exiv2.filterXMP(packet: packet, keepingTopLevelKeys: ["Xmp.dc.rights"]))
        let text = String(decoding: filtered, as: UTF8.self)
        XCTAssertFalse(text.contains("<?xpacket"), text)
        XCTAssertFalse(text.contains("SecretTool"), text)
        XCTAssertFalse(text.contains("John Roe"), text)
        let keys = Set(try Exiv2.decodeXMP(packet: filtered).map(\.key))
        XCTAssertEqual(keys, ["Xmp.dc.rights"])

        // A struct array is kept whole with its top-level key.
        let history = try XCTUnwrap(try Exiv2.filterXMP(packet: packet, keepingTopLevelKeys: ["Xmp.xmpMM.History", "Xmp.dc.creator"]))
        let historyKeys = Set(try Exiv2.decodeXMP(packet: history).map(\.key))
        XCTAssertTrue(historyKeys.contains("Xmp.xmpMM.History[2]/stEvt:action"), "\(historyKeys)")
        XCTAssertTrue(historyKeys.contains("Xmp.dc.creator"), "\(historyKeys)")
        XCTAssertFalse(historyKeys.contains("Xmp.dc.rights"), "\(historyKeys)")
        XCTAssertFalse(historyKeys.contains("Xmp.xmp.CreatorTool"), "\(historyKeys)")

        XCTAssertNil(try Exiv2.filterXMP(packet: packet, keepingTopLevelKeys: []))
        XCTAssertNil(try Exiv2.filterXMP(packet: packet, keepingTopLevelKeys: ["Xmp.photoshop.City"]))
    }

    func testMalformedXMPThrows() {
        XCTAssertThrowsError(try Exiv2.decodeXMP(packet: Array("<x:xmpmeta><unclosed".utf8))) { error in
            XCTAssertTrue("\(error)".hasPrefix("exiv2: "), "\(error)")
        }
    }

    /// Little-endian TIFF: IFD0 { Make "Canon", ExifIFD -> { MakerNote -> Canon IFD { OwnerName } } }.
    static func canonTIFF(owner: String) -> [UInt8] {
        var b: [UInt8] = []
        func u16(_ v: Int) { b += [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
        func u32(_ v: Int) { b += [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24 & 0xFF)] }
        func entry(_ tag: Int, _ type: Int, _ count: Int, _ value: Int) { u16(tag); u16(type); u32(count); u32(value) }
        // Header.
        b += Array("II".utf8); u16(42); u32(8)
        // IFD0 at 8: 2 entries -> 2 + 24 + 4 = 30 bytes, ends at 38; "Canon\0" at 38..44.
        u16(2)
        entry(0x010F, 2, 6, 38)          // Make, ASCII
        entry(0x8769, 4, 1, 44)          // ExifIFD pointer, LONG
        u32(0)
        b += Array("Canon".utf8) + [0]
        // Exif IFD at 44: 1 entry -> 18 bytes, ends at 62; the maker note is 62..<112.
        u16(1)
        entry(0x927C, 7, 50, 62)         // MakerNote, UNDEFINED
        u32(0)
        // Canon maker note at 62 (offsets from the TIFF start): 1 entry -> 18 bytes; OwnerName at 80..<112.
        u16(1)
        entry(0x0009, 2, 32, 80)         // OwnerName, ASCII[32]
        u32(0)
        var name = Array(owner.utf8.prefix(31))
        name += [UInt8](repeating: 0, count: 32 - name.count)
        b += name
        precondition(b.count == 112)
        return b
    }

    func testDecodeExifCanonMakerNote() throws {
        let tags = try Exiv2.decodeExif(tiff: Self.canonTIFF(owner: "Jane Photographer"))
        let keys = tags.map(\.key)
        XCTAssertTrue(keys.contains("Exif.Image.Make"), "\(keys)")
        let owner = try XCTUnwrap(tags.first { $0.key == "Exif.Canon.OwnerName" }, "\(keys)")
        XCTAssertEqual(owner.group, "Canon")
        XCTAssertEqual(owner.name, "OwnerName")
        XCTAssertEqual(owner.typeName, "Ascii")
        XCTAssertEqual(owner.count, 32)
        XCTAssertEqual(owner.value, "Jane Photographer")
    }

    func testDecodeExifRejectsNonTIFF() {
        XCTAssertThrowsError(try Exiv2.decodeExif(tiff: Array("Exif\0\0nope".utf8))) { XCTAssertTrue($0 is NativeError) }
        XCTAssertThrowsError(try Exiv2.decodeExif(tiff: [])) { XCTAssertTrue($0 is NativeError) }
        // A header pointing outside the block must fail or decode nothing, never crash.
        let truncated: [UInt8] = Array("II".utf8) + [42, 0, 0xFF, 0xFF, 0, 0]
        if let tags = try? Exiv2.decodeExif(tiff: truncated) { XCTAssertTrue(tags.isEmpty) }
    }

    func testDecodeIPTC() throws {
        func dataset(_ record: UInt8, _ number: UInt8, _ value: String) -> [UInt8] {
            let bytes = Array(value.utf8)
            return [0x1C, record, number, UInt8(bytes.count >> 8), UInt8(bytes.count & 0xFF)] + bytes
        }
        let iim = dataset(1, 90, "\u{1B}%G") + dataset(2, 0, "\u{0}\u{4}") + dataset(2, 90, "Zurich") + dataset(2, 80, "Jane Doe")
        let tags = try Exiv2.decodeIPTC(iim: iim)
        let city = try XCTUnwrap(tags.first { $0.key == "Iptc.Application2.City" }, "\(tags.map(\.key))")
        XCTAssertEqual(city.value, "Zurich")
        XCTAssertEqual(city.group, "Application2")
        XCTAssertEqual(city.name, "City")
        XCTAssertTrue(tags.contains { $0.key == "Iptc.Application2.Byline" }, "\(tags.map(\.key))")
    }

    func testLongValuesAreCut() throws {
        let long = String(repeating: "x", count: 1000)
        let packet = """
            <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
            <rdf:Description rdf:about="" xmlns:xmp="http://ns.adobe.com/xap/1.0/" xmp:Label="\(long)"/>
            </rdf:RDF></x:xmpmeta>
            """
        let tag = try XCTUnwrap(try Exiv2.decodeXMP(packet: Array(packet.utf8)).first { $0.key == "Xmp.xmp.Label" })
        XCTAssertEqual(tag.value.count, 256)
        XCTAssertEqual(tag.size, 1000)
    }

    func testExiv2FromManyTasks() async throws {
        let packet = Array(Self.xmpPacket.utf8)
        let tiff = Self.canonTIFF(owner: "Concurrent Owner")
        let counts = try await withThrowingTaskGroup(of: Int.self) { group in
            for i in 0..<32 {
                group.addTask {
                    if i.isMultiple(of: 2) {
                        return try Exiv2.decodeXMP(packet: packet).count
                    } else {
                        return try Exiv2.decodeExif(tiff: tiff).filter { $0.key == "Exif.Canon.OwnerName" }.count
                    }
                }
            }
            var all: [Int] = []
            for try await c in group { all.append(c) }
            return all
        }
        XCTAssertEqual(counts.count, 32)
        XCTAssertFalse(counts.contains(0))
    }

    // MARK: - PNG

    func testPNG8And16Bit() throws {
        let png8 = try imageMagick(["-size", "4x3", "xc:rgb(255,0,0)"], output: "red8.png")
        let d8 = try PNGDecoder.decodeRGBA16(png8)
        XCTAssertEqual(d8.width, 4)
        XCTAssertEqual(d8.height, 3)
        XCTAssertEqual(d8.pixels.count, 4 * 3 * 4)
        XCTAssertEqual(Array(d8.pixels[0..<4]), [65535, 0, 0, 65535])

        let png16 = try imageMagick(["-size", "5x2", "xc:rgb(255,0,0)", "-depth", "16"], output: "red16.png")
        let d16 = try PNGDecoder.decodeRGBA16(png16)
        XCTAssertEqual(d16.width, 5)
        XCTAssertEqual(d16.height, 2)
        XCTAssertEqual(Array(d16.pixels[0..<4]), [65535, 0, 0, 65535])

        let gray = try imageMagick(["-size", "2x2", "xc:rgb(128,128,128)", "-colorspace", "Gray", "-define", "png:color-type=0"], output: "gray.png")
        let dg = try PNGDecoder.decodeRGBA16(gray)
        XCTAssertEqual(dg.pixels[0], dg.pixels[1])
        XCTAssertEqual(dg.pixels[3], 65535)
    }

    func testPNGGarbageThrows() {
        XCTAssertThrowsError(try PNGDecoder.decodeRGBA16(Array("\u{89}PNG\r\n\u{1A}\nbroken".utf8))) { error in
            XCTAssertTrue("\(error)".hasPrefix("libpng: "), "\(error)")
        }
        XCTAssertThrowsError(try PNGDecoder.decodeRGBA16([])) { XCTAssertTrue($0 is NativeError) }
    }

    // MARK: - Link check

    func testVersions() {
        let versions = NativeLibraries.versions()
        for key in ["exiv2", "libpng", "libheif"] {
            XCTAssertFalse(versions[key, default: ""].isEmpty, "missing \(key) in \(versions)")
        }
        XCTAssertTrue(versions["exiv2", default: ""].hasPrefix("0.27"), "\(versions)")
        XCTAssertTrue(versions["libpng", default: ""].hasPrefix("1.6."), "\(versions)")
        print("native library versions:", versions.sorted { $0.key < $1.key })
    }

    // MARK: - Byte helpers

    private func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, haystack.count >= needle.count else { return false }
        for i in 0...(haystack.count - needle.count) where haystack[i] == needle[0] {
            if Array(haystack[i..<i + needle.count]) == needle { return true }
        }
        return false
    }

    /// Walks the marker segments before SOS and says whether `marker` is among them.
    private func hasMarker(_ jpeg: [UInt8], _ marker: UInt8) -> Bool {
        var i = 2
        while i + 4 <= jpeg.count, jpeg[i] == 0xFF {
            let m = jpeg[i + 1]
            if m == marker { return true }
            if m == 0xDA { return false }
            let length = Int(jpeg[i + 2]) << 8 | Int(jpeg[i + 3])
            i += 2 + length
        }
        return false
    }
}
