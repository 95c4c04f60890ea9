// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import XCTest

/// The pixel budget and the bounded bake decision (issue 25): a JPEG that declares far more pixels than it
/// holds costs a header read, never memory in proportion to its declared size; a flat rotated photo costs a band,
/// not a whole-image proof. Oracles: ImageMagick makes the images, exiftool reads the tags back, the process runs
/// under `ulimit -v` (a whole decode of the bomb needs 1.5 GB).
final class PixelBudgetTests: XCTestCase {
    var dir: String!

    override func setUpWithError() throws {
        try Harness.requireBinary()
        try Harness.require("convert")
        try Harness.require("exiftool")
        dir = Harness.makeTemp("budget")
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    /// A flat JPEG of `width`×`height` with EXIF orientation `orientation`.
    func flat(_ name: String, width: Int, height: Int, orientation: Int) -> String {
        Harness.sh("convert -size \(width)x\(height) xc:'#6080a0' -sampling-factor 2x2 -quality 90 \(name) && exiftool -q -overwrite_original -n -Orientation=\(orientation) \(name)", cwd: dir)
        return dir + "/" + name
    }

    /// 32×32 coded data under a frame header that says 16000×16000 (256 MP): the decoder would pad the
    /// missing rows, so a whole decode allocates 768 MB per copy.
    func bomb() throws -> String {
        let path = flat("small.jpg", width: 32, height: 32, orientation: 6)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        var i = 2
        while i + 9 < bytes.count {
            let marker = bytes[i + 1], length = Int(bytes[i + 2]) << 8 | Int(bytes[i + 3])
            if marker == 0xC0 {
                bytes[i + 5] = 0x3E; bytes[i + 6] = 0x80; bytes[i + 7] = 0x3E; bytes[i + 8] = 0x80
                break
            }
            i += 2 + length
        }
        let out = dir + "/bomb.jpg"
        try Data(bytes).write(to: URL(fileURLWithPath: out))
        XCTAssertEqual(Harness.sh("exiftool -s3 -ImageSize bomb.jpg", cwd: dir).out.trimmingCharacters(in: .whitespacesAndNewlines), "16000x16000")
        return out
    }

    func testADecompressionBombIsScannedAndCleanedWithoutDecoding() throws {
        _ = try bomb()
        let limit = "ulimit -v 400000; "
        let scan = Harness.sh(limit + "'\(Harness.binary)' scan --json bomb.jpg", cwd: dir, check: false)
        XCTAssertEqual(scan.status, 1, scan.stderr)
        XCTAssertTrue(scan.out.contains("over the pixel budget of 100 MP"), scan.out)
        let clean = Harness.sh(limit + "'\(Harness.binary)' clean bomb.jpg -o out.jpg", cwd: dir, check: false)
        XCTAssertEqual(clean.status, 0, clean.stderr + clean.out)
        XCTAssertEqual(Harness.sh("exiftool -s3 -n -Orientation out.jpg", cwd: dir).out.trimmingCharacters(in: .whitespacesAndNewlines), "6",
                       "the orientation a viewer needs stays when the image is not turned")
        // Fixed point: the kept tag stays kept, for the same reason, without decoding either.
        XCTAssertEqual(Harness.sh(limit + "'\(Harness.binary)' scan out.jpg", cwd: dir, check: false).status, 0)
    }

    func testMaxPixelsKeepsABakeAndRefusesAReencodeClearly() throws {
        let path = flat("flat.jpg", width: 64, height: 48, orientation: 6)
        let kept = Harness.metascrub(["clean", "--max-pixels", "1000", path, "-o", dir + "/kept.jpg"])
        XCTAssertEqual(kept.status, 0, kept.stderr)
        XCTAssertTrue(kept.out.contains("over the pixel budget of 1000 pixels"), kept.out)
        XCTAssertEqual(Harness.sh("exiftool -s3 -n -Orientation kept.jpg", cwd: dir).out.trimmingCharacters(in: .whitespacesAndNewlines), "6")

        try "schema: 1\nname: reencode\nreencode: true\nmax-pixels: 1000\n".write(toFile: dir + "/re.yaml", atomically: true, encoding: .utf8)
        let refused = Harness.metascrub(["clean", "--policy", dir + "/re.yaml", path, "-o", dir + "/re.jpg"])
        XCTAssertEqual(refused.status, 3, refused.out)
        XCTAssertTrue(refused.out.contains("exceeds the limit: 1000 pixels"), refused.out)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/re.jpg"), "nothing is written when a re-encode is refused")

        try "schema: 1\nname: zero\nmax-pixels: 0\n".write(toFile: dir + "/zero.yaml", atomically: true, encoding: .utf8)
        let bad = Harness.metascrub(["scan", "--policy", dir + "/zero.yaml", path])
        XCTAssertEqual(bad.status, 2)
        XCTAssertTrue(bad.stderr.contains("max-pixels"), bad.stderr)
    }

    /// Standard input goes through `FileProcessor` without a batch: the budget reaches its decoders and its
    /// DCT-domain transform too (the transform holds every coefficient).
    func testStandardInputObeysTheBudget() throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: flat("pipe.jpg", width: 64, height: 48, orientation: 6)))
        try "schema: 1\nname: reencode\nreencode: true\nmax-pixels: 1000\n".write(toFile: dir + "/re.yaml", atomically: true, encoding: .utf8)
        let refused = Harness.metascrub(["clean", "--policy", dir + "/re.yaml", "-", "--output", "-"], input: data)
        XCTAssertEqual(refused.status, 3, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("exceeds the limit: 1000 pixels"), refused.stderr)
        XCTAssertTrue(refused.stdout.isEmpty, "nothing is written when the budget refuses")

        let kept = Harness.metascrub(["clean", "--max-pixels", "1000", "-", "--output", "-"], input: data)
        XCTAssertEqual(kept.status, 0, kept.stderr)
        XCTAssertTrue(kept.stderr.contains("over the pixel budget of 1000 pixels"), kept.stderr)
        try kept.stdout.write(to: URL(fileURLWithPath: dir + "/piped.jpg"))
        XCTAssertEqual(Harness.sh("exiftool -s3 -n -Orientation piped.jpg", cwd: dir).out.trimmingCharacters(in: .whitespacesAndNewlines), "6")
    }

    /// A flat image's band decodes identically after the turn, so only a whole-image proof could settle it:
    /// made for a small image (which is baked, exiftool finds no tag), not for one over the proof's 1 MP.
    func testAFlatRotatedImageIsProvenOnlyWhenSmall() throws {
        let small = flat("small6.jpg", width: 256, height: 192, orientation: 6)
        let baked = Harness.metascrub(["clean", small, "-o", dir + "/baked.jpg"])
        XCTAssertEqual(baked.status, 0, baked.stderr)
        XCTAssertEqual(Harness.sh("exiftool -s3 -ImageSize -Orientation baked.jpg", cwd: dir).out.trimmingCharacters(in: .whitespacesAndNewlines), "192x256")

        for orientation in [3, 6, 8] {
            let large = flat("large\(orientation).jpg", width: 1280, height: 960, orientation: orientation)
            let scan = Harness.metascrub(["scan", "--json", large])
            XCTAssertTrue(scan.out.contains("decoding all 1280×960 pixels twice"), scan.out)
            let kept = Harness.metascrub(["clean", large, "-o", dir + "/kept\(orientation).jpg"])
            XCTAssertEqual(kept.status, 0, kept.stderr)
            XCTAssertEqual(Harness.sh("exiftool -s3 -n -Orientation kept\(orientation).jpg", cwd: dir).out.trimmingCharacters(in: .whitespacesAndNewlines), "\(orientation)")
            XCTAssertEqual(Harness.metascrub(["scan", dir + "/kept\(orientation).jpg"]).status, 0, "fixed point")
        }
    }
}
