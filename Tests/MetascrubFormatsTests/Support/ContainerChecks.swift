// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubCore
import XCTest

/// Checks shared by the PNG, WebP, GIF and TIFF tests: strict cleaning judged by independent tools, refusal
/// of broken files, and robustness against truncated and corrupted input.
enum ContainerChecks {
    /// Tag names ExifTool reports that describe the image itself (as in shared/tools/oracle.py).
    static let structuralTags: Set<String> = [
        "ImageWidth", "ImageHeight", "BitDepth", "ColorType", "Compression", "Filter", "Interlace", "Gamma", "SRGBRendering",
        "WhitePointX", "WhitePointY", "RedX", "RedY", "GreenX", "GreenY", "BlueX", "BlueY", "PixelsPerUnitX", "PixelsPerUnitY",
        "PixelUnits", "Palette", "PaletteColors", "Transparency", "BackgroundColor", "SignificantBits", "AnimationFrames",
        "AnimationPlays", "VP8Version", "HorizontalScale", "VerticalScale", "AlphaPreprocessing", "AlphaFiltering",
        "AlphaCompression", "WebP_Flags", "AnimationLoopCount", "FrameCount", "Duration", "GIFVersion", "HasColorMap",
        "ColorResolutionDepth", "BitsPerPixel", "AnimationIterations", "BitsPerSample", "SamplesPerPixel",
        "PhotometricInterpretation", "PlanarConfiguration", "StripOffsets", "StripByteCounts", "RowsPerStrip", "TileWidth",
        "TileLength", "TileOffsets", "TileByteCounts", "SubfileType", "Orientation", "XResolution", "YResolution",
        "ResolutionUnit", "ExifByteOrder", "Text", "Predictor", "ExtraSamples", "SampleFormat", "FillOrder",
    ]

    /// Non-structural tags ExifTool still sees.
    static func residualTags(_ path: String) -> [String] {
        Oracle.metadataTags(path).filter { key in
            let tag = key.split(separator: ":").last.map(String.init) ?? key
            return !structuralTags.contains(tag)
        }
    }

    /// Canary strings the manifest lists for a fixture.
    static func canaries(_ relative: String) -> [String] {
        guard let text = try? String(contentsOfFile: Fixture.path("MANIFEST.tsv"), encoding: .utf8) else { return [] }
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            if fields.count >= 4, fields[0] == relative {
                return fields[3].split(separator: ",").map(String.init)
            }
        }
        return []
    }

    /// Cleans a fixture with the strict policy and checks the output with ExifTool and ImageMagick.
    /// `samePixels`: stored pixels unchanged (false when orientation is baked).
    @discardableResult
    static func assertStrictClean(
        _ relative: String, in dir: TempDir, samePixels: Bool = true, allowedResidual: Set<String> = [],
        file: StaticString = #filePath, line: UInt = #line
    ) -> (report: FileReport, output: String) {
        let input = Fixture.path(relative)
        let output = dir.file((relative as NSString).lastPathComponent)
        let report = Run.clean(input, to: output)
        XCTAssertTrue([.cleaned, .clean].contains(report.status), "\(relative): \(report.status) \(report.error.map { "\($0)" } ?? "")",
                      file: file, line: line)
        XCTAssertTrue(FileManager.default.fileExists(atPath: output), "\(relative): no output", file: file, line: line)
        let residual = residualTags(output).filter { !allowedResidual.contains($0) }
        XCTAssertEqual(residual, [], "\(relative): ExifTool still sees metadata", file: file, line: line)
        for canary in canaries(relative) {
            XCTAssertFalse(Oracle.contains(output, canary), "\(relative): canary \(canary) left in the output", file: file, line: line)
        }
        if samePixels {
            let before = Oracle.pixels(input, autoOrient: false)
            XCTAssertNotNil(before, "\(relative): ImageMagick cannot decode the input", file: file, line: line)
            XCTAssertEqual(before, Oracle.pixels(output, autoOrient: false), "\(relative): pixels changed", file: file, line: line)
            XCTAssertEqual(Oracle.pixels(input, autoOrient: true), Oracle.pixels(output, autoOrient: true),
                           "\(relative): displayed image changed", file: file, line: line)
        }
        return (report, output)
    }

    /// A broken file: an error with an offset-bearing message, and nothing written.
    static func assertRefused(_ relative: String, in dir: TempDir, code: String? = nil, file: StaticString = #filePath, line: UInt = #line) {
        let output = dir.file("refused-" + (relative as NSString).lastPathComponent)
        let report = Run.clean(Fixture.path(relative), to: output)
        XCTAssertEqual(report.status, .error, relative, file: file, line: line)
        if let code { XCTAssertEqual(report.error?.code, code, relative, file: file, line: line) }
        XCTAssertFalse(FileManager.default.fileExists(atPath: output), "\(relative): output written for a refused file", file: file, line: line)
    }

    /// Truncates a fixture at about 20 offsets and flips bytes (seeded): every run ends in a verified clean
    /// result or an error with nothing written, never a crash.
    static func assertRobust(_ relative: String, in dir: TempDir, seed: UInt64 = 0x5EED, file: StaticString = #filePath, line: UInt = #line) {
        guard let data = FileManager.default.contents(atPath: Fixture.path(relative)) else {
            XCTFail("missing fixture \(relative)", file: file, line: line)
            return
        }
        let bytes = [UInt8](data)
        var variants: [(String, [UInt8])] = []
        for k in 1...20 {
            let cut = bytes.count * k / 21
            variants.append(("cut at \(cut)", Array(bytes[..<cut])))
        }
        var state = seed
        func next() -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int(truncatingIfNeeded: state >> 33)
        }
        for k in 0..<20 {
            var mutated = bytes
            for _ in 0..<(1 + k % 4) {
                let at = next() % mutated.count
                mutated[at] ^= UInt8(1 << (next() % 8))
            }
            variants.append(("flips #\(k)", mutated))
        }
        let ext = (relative as NSString).pathExtension
        let stem = ((relative as NSString).lastPathComponent as NSString).deletingPathExtension
        for (n, (what, variant)) in variants.enumerated() {
            let input = dir.file("robust-\(stem)-\(n).\(ext)")
            let output = dir.file("robust-\(stem)-\(n)-out.\(ext)")
            FileManager.default.createFile(atPath: input, contents: Data(variant))
            let report = Run.clean(input, to: output)
            switch report.status {
            case .cleaned, .clean:
                XCTAssertTrue(FileManager.default.fileExists(atPath: output), "\(relative) \(what): no output", file: file, line: line)
            case .error:
                XCTAssertFalse(FileManager.default.fileExists(atPath: output), "\(relative) \(what): output after an error (\(report.error?.message ?? ""))", file: file, line: line)
            default:
                XCTFail("\(relative) \(what): unexpected status \(report.status)", file: file, line: line)
            }
        }
    }

    /// The PNG-style chunk list of a file (type, data) with each CRC checked.
    static func pngChunks(_ path: String) -> [(type: String, data: [UInt8], crcOK: Bool)] {
        guard let data = FileManager.default.contents(atPath: path) else { return [] }
        let b = [UInt8](data)
        var out: [(String, [UInt8], Bool)] = []
        var at = 8
        while at + 12 <= b.count {
            let n = Int(b[at]) << 24 | Int(b[at + 1]) << 16 | Int(b[at + 2]) << 8 | Int(b[at + 3])
            guard at + 12 + n <= b.count else { break }
            let type = String(decoding: b[at + 4..<at + 8], as: UTF8.self)
            let crc = UInt32(b[at + 8 + n]) << 24 | UInt32(b[at + 9 + n]) << 16 | UInt32(b[at + 10 + n]) << 8 | UInt32(b[at + 11 + n])
            out.append((type, Array(b[at + 8..<at + 8 + n]), crc32(b[at + 4..<at + 8 + n]) == crc))
            at += 12 + n
            if type == "IEND" { break }
        }
        return out
    }

    static func crc32(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    /// A policy that keeps everything except location, with orientation kept: exercises partial rebuilds.
    static let keepAllButLocation = Policy(
        name: "test-keep-but-location", categories: [.location: .remove], unknown: .keep, fallback: .keep, orientation: .keep)
}
