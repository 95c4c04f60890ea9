// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubCore
import MetascrubFormats
import XCTest

/// JPEG end to end, judged by independent tools: ExifTool for what remains, ImageMagick for pixels.
final class JPEGTests: XCTestCase {
    static let canaries = [
        "CANARY-ARTIST", "CANARY-COPYRIGHT", "CANARY-SERIAL", "CanaryMake", "CANARY-SOFTWARE", "CANARY-DESCRIPTION",
        "CANARY-USERCOMMENT", "CANARY-XMP", "CANARY-CITY", "CANARY-IPTC", "CANARY-COMMENT", "CANARY-OWNER",
        "CANARY-PERSON", "CANARY-SAMSUNG", "CANARY-C2PA", "CANARY-VENDOR",
    ]

    override func setUpWithError() throws {
        try Tool.require("exiftool", "convert")
    }

    var goodFixtures: [String] { Fixture.all(in: "jpeg", extensions: ["jpg"]) }

    func testFixturesExist() {
        XCTAssertGreaterThanOrEqual(goodFixtures.count, 30, "run scripts/make-fixtures")
    }

    /// The promise: nothing the policy removes is left, and the image displays exactly as before.
    func testStrictCleanLeavesNoMetadataAndDisplaysTheSame() throws {
        let tmp = TempDir()
        for input in goodFixtures {
            let name = (input as NSString).lastPathComponent
            let output = tmp.file(name)
            let report = Run.clean(input, to: output)
            XCTAssertNotEqual(report.status, .error, "\(name): \(report.error?.message ?? "")")
            XCTAssertEqual(report.verification?.rescan ?? .passed, .passed, name)
            let left = Oracle.metadataTags(output).filter { tag in
                // A minimal orientation tag is what the policy keeps when baking would change pixels.
                !(tag.hasSuffix(":Orientation") || tag.hasPrefix("IFD0:") && report.notes.contains { $0.code == "orientation-fallback" }
                    && ["IFD0:Orientation", "IFD0:ResolutionUnit"].contains(tag))
                    && !tag.hasPrefix("Adobe:") // APP14 is needed to decode the colours of CMYK/YCCK files
            }
            XCTAssertEqual(left, [], "\(name): ExifTool still sees \(left)")
            for canary in Self.canaries {
                XCTAssertFalse(Oracle.contains(output, canary), "\(name): \(canary) left in the output bytes")
            }
            XCTAssertEqual(Oracle.pixels(output, autoOrient: true), Oracle.pixels(input, autoOrient: true), "\(name): display changed")
            if report.method == .remux {
                XCTAssertEqual(Oracle.pixels(output, autoOrient: false), Oracle.pixels(input, autoOrient: false), "\(name): pixels changed")
            }
        }
    }

    func testGPSPhotoIsFullyItemised() {
        let report = Run.scan(Fixture.path("jpeg/gps-full.jpg"))
        XCTAssertEqual(report.status, .findings)
        let keys = Set(report.findings.map(\.item.key))
        for key in ["exif:GPSLatitude", "exif:GPSLongitude", "exif:GPSAltitude", "exif:Make", "exif:Model", "exif:BodySerialNumber",
                    "exif:Artist", "exif:Copyright", "exif:DateTimeOriginal", "exif:Software", "exif:ThumbnailImage", "exif:Orientation"] {
            XCTAssertTrue(keys.contains(key), "missing \(key)")
        }
        let gps = report.findings.first { $0.item.key == "exif:GPSLatitude" }
        XCTAssertEqual(gps?.item.category, .location)
        XCTAssertEqual(gps?.item.location, "APP1#1/EXIF/GPS/0x0002")
        XCTAssertNil(gps?.item.value, "values are not captured unless asked")
        XCTAssertEqual(report.findings.first { $0.item.key == "exif:ThumbnailImage" }?.item.category, .embedded)
    }

    func testEverySegmentKindIsNamed() {
        func keys(_ fixture: String) -> Set<String> { Set(Run.scan(Fixture.path("jpeg/\(fixture)")).findings.map(\.item.key)) }
        XCTAssertTrue(keys("xmp.jpg").isSuperset(of: ["xmp:dc:creator", "xmp:dc:rights", "xmp:xmpMM:History", "xmp:photoshop:City"]))
        XCTAssertTrue(keys("xmp-extended.jpg").contains("xmp:ExtendedXMP"))
        XCTAssertTrue(keys("iptc.jpg").isSuperset(of: ["iptc:By-line", "iptc:CopyrightNotice", "iptc:City", "iptc:Caption-Abstract"]))
        XCTAssertTrue(keys("icc.jpg").contains("icc:profile"))
        XCTAssertTrue(keys("mpf.jpg").isSuperset(of: ["mpf:index", "mpf:MPImage2"]))
        XCTAssertTrue(keys("motionphoto.jpg").contains("jpeg:trailer"))
        XCTAssertTrue(keys("seft-trailer.jpg").contains("jpeg:trailer"))
        XCTAssertTrue(keys("c2pa-app11.jpg").contains("jumbf:c2pa"))
        XCTAssertTrue(keys("comment.jpg").contains("jpeg:comment"))
        XCTAssertTrue(keys("cmyk-adobe.jpg").contains("jpeg:Adobe"))
        XCTAssertTrue(keys("ducky-vendor.jpg").contains { $0.hasPrefix("jpeg:APP") })
        let iccMulti = Run.scan(Fixture.path("jpeg/icc-multi.jpg")).findings.first { $0.item.key == "icc:profile" }
        XCTAssertTrue(iccMulti?.item.detail?.contains("segments") ?? false, "a multi-segment profile is one item")
    }

    func testMakerNoteSerialsAreDecodedAndRemovedWithTheirBlock() {
        let report = Run.scan(Fixture.path("jpeg/makernote-canon.jpg"))
        let note = report.findings.firstIndex { $0.item.key == "exif:MakerNote" }
        XCTAssertNotNil(note)
        let children = report.findings.filter { $0.item.parent == note }
        XCTAssertTrue(children.contains { $0.item.key == "makernote:Canon.OwnerName" && $0.item.category == .identity }, "\(children.map(\.item.key))")
        XCTAssertTrue(children.allSatisfy { $0.disposition == .remove })
    }

    func testTrailersAndSecondaryImagesAreClassifiedEmbedded() {
        let motion = Run.scan(Fixture.path("jpeg/motionphoto.jpg")).findings.first { $0.item.key == "jpeg:trailer" }
        XCTAssertEqual(motion?.item.category, .embedded)
        XCTAssertTrue(motion?.item.detail?.contains("motion photo") ?? false)
        let seft = Run.scan(Fixture.path("jpeg/seft-trailer.jpg")).findings.first { $0.item.key == "jpeg:trailer" }
        XCTAssertTrue(seft?.item.detail?.contains("SEFT") ?? false)
    }

    func testOrientationIsBakedOnlyWhenExactAndOtherwiseKeptMinimally() throws {
        let tmp = TempDir()
        for n in 1...8 {
            for variant in ["orient", "orient-odd"] {
                let input = Fixture.path("jpeg/\(variant)-\(n).jpg")
                let output = tmp.file("\(variant)-\(n).jpg")
                let report = Run.clean(input, to: output)
                XCTAssertEqual(report.status, .cleaned, "\(variant)-\(n)")
                XCTAssertEqual(Oracle.pixels(output, autoOrient: true), Oracle.pixels(input, autoOrient: true), "\(variant)-\(n) displays differently")
                let orientation = Oracle.exiftool(output)["IFD0:Orientation"] as? Int
                let finding = report.findings.first { $0.item.key == "exif:Orientation" }
                switch finding?.outcome {
                case .baked?:
                    XCTAssertNil(orientation, "\(variant)-\(n): baked but the tag is still there")
                    XCTAssertEqual(report.method, .losslessTransform)
                case .keptAsFallback?:
                    XCTAssertEqual(orientation, n, "\(variant)-\(n): fallback must keep the original orientation")
                    XCTAssertTrue(report.notes.contains { $0.code == "orientation-fallback" })
                    XCTAssertEqual(Oracle.metadataTags(output).filter { !$0.hasPrefix("IFD0:") }, [], "only a minimal IFD0 remains")
                case .removed?:
                    XCTAssertEqual(n, 1, "only orientation 1 is simply removed")
                default:
                    XCTFail("\(variant)-\(n): unexpected outcome \(String(describing: finding?.outcome))")
                }
                if variant == "orient-odd", n != 1, n != 5 {
                    XCTAssertEqual(finding?.outcome, .keptAsFallback, "a partial-MCU image is never cropped")
                }
            }
        }
    }

    func testRotateModeBakesEveryPerfectTransform() throws {
        var policy = Run.policy("strict")
        policy.orientation = .rotate
        let tmp = TempDir()
        for n in 2...8 {
            let output = tmp.file("o\(n).jpg")
            let report = Run.clean(Fixture.path("jpeg/orient-\(n).jpg"), to: output, policy: policy)
            XCTAssertEqual(report.status, .cleaned)
            XCTAssertEqual(report.method, .losslessTransform, "orient-\(n)")
            XCTAssertNil(Oracle.exiftool(output)["IFD0:Orientation"])
            let size = Oracle.exiftool(output)
            let rotated = n >= 5
            XCTAssertEqual(size["File:ImageWidth"] as? Int, rotated ? 32 : 48)
        }
    }

    func testSharePolicyKeepsAuthorshipOnly() throws {
        let tmp = TempDir()
        let output = tmp.file("share.jpg")
        let report = Run.clean(Fixture.path("jpeg/gps-full.jpg"), to: output, policy: "share")
        XCTAssertEqual(report.status, .cleaned)
        let meta = Oracle.exiftool(output)
        XCTAssertEqual(meta["IFD0:Artist"] as? String, "CANARY-ARTIST-Alice")
        XCTAssertEqual(meta["IFD0:Copyright"] as? String, "CANARY-COPYRIGHT-2026")
        XCTAssertNil(meta["GPS:GPSLatitude"])
        XCTAssertNil(meta["IFD0:Make"])
        XCTAssertNil(meta["ExifIFD:BodySerialNumber"])
        let xmp = tmp.file("share-xmp.jpg")
        _ = Run.clean(Fixture.path("jpeg/xmp.jpg"), to: xmp, policy: "share")
        let x = Oracle.exiftool(xmp)
        XCTAssertNotNil(x["XMP-dc:Creator"])
        XCTAssertNotNil(x["XMP-dc:Rights"])
        XCTAssertNil(x["XMP-photoshop:City"])
        XCTAssertNil(x["XMP-xmpMM:HistoryAction"])
        XCTAssertNil(x["XMP-exif:GPSLatitude"])
    }

    func testLocationPolicyKeepsTheCameraButNotThePlace() throws {
        let tmp = TempDir()
        let output = tmp.file("loc.jpg")
        let report = Run.clean(Fixture.path("jpeg/gps-full.jpg"), to: output, policy: "location")
        XCTAssertEqual(report.status, .cleaned)
        let meta = Oracle.exiftool(output)
        XCTAssertEqual(meta["IFD0:Make"] as? String, "CanaryMake")
        XCTAssertNotNil(meta["ExifIFD:DateTimeOriginal"])
        XCTAssertNil(meta["GPS:GPSLatitude"])
        XCTAssertNil(meta["IFD1:ThumbnailImage"])
        let canon = tmp.file("canon.jpg")
        _ = Run.clean(Fixture.path("jpeg/makernote-canon.jpg"), to: canon, policy: "location")
        XCTAssertEqual(Oracle.exiftool(canon)["Canon:OwnerName"] as? String, "CANARY-OWNER", "a kept maker note still decodes")
    }

    func testBadFilesFailClearlyAndWriteNothing() {
        let tmp = TempDir()
        for input in Fixture.all(in: "jpeg/bad", extensions: ["jpg"]) {
            let name = (input as NSString).lastPathComponent
            let output = tmp.file(name)
            let report = Run.clean(input, to: output)
            XCTAssertEqual(report.status, .error, name)
            XCTAssertNotNil(report.error, name)
            XCTAssertFalse(FileManager.default.fileExists(atPath: output), "\(name): something was written")
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: tmp.path), [], "no temp files left behind")
        let truncated = Run.scan(Fixture.path("jpeg/bad/truncated-header.jpg"))
        XCTAssertEqual(truncated.error?.code, "truncated")
        XCTAssertNotNil(truncated.error?.offset)
    }

    /// Truncation at many offsets and seeded byte flips: a clean result or a typed error, never a crash.
    func testTruncatedAndCorruptedInputsNeverCrash() throws {
        let tmp = TempDir()
        var generator = SplitMix64(seed: 0x6D65_7461)
        for input in ["gps-full.jpg", "xmp.jpg", "iptc.jpg", "mpf.jpg", "makernote-canon.jpg", "icc-multi.jpg", "progressive.jpg"] {
            let bytes = try XCTUnwrap(FileManager.default.contents(atPath: Fixture.path("jpeg/\(input)")))
            var variants: [Data] = stride(from: 0, to: bytes.count, by: max(1, bytes.count / 24)).map { bytes.prefix($0) }
            for _ in 0..<24 {
                var flipped = bytes
                for _ in 0..<4 { flipped[Int(generator.next() % UInt64(bytes.count))] ^= UInt8(truncatingIfNeeded: generator.next() | 1) }
                variants.append(flipped)
            }
            for (i, data) in variants.enumerated() {
                let path = tmp.file("\(input)-v\(i).jpg"), out = tmp.file("\(input)-v\(i)-out.jpg")
                _ = FileManager.default.createFile(atPath: path, contents: data)
                let report = Run.clean(path, to: out)
                if report.status == .error {
                    XCTAssertNotNil(report.error)
                    XCTAssertFalse(FileManager.default.fileExists(atPath: out))
                } else {
                    XCTAssertEqual(report.verification?.rescan ?? .passed, .passed)
                }
            }
        }
    }
}

/// A tiny deterministic generator for reproducible corruption.
struct SplitMix64 {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
