// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubCore
import XCTest

/// Issue 8: every fixture the manifest expects to clean, truncated and byte-flipped (seeded), must end in a
/// verified clean output or a typed error with nothing written, never a crash or hang. CI runs a few variants
/// per fixture; `scripts/robustness N` runs N (METASCRUB_ROBUST_VARIANTS). Times are measured and printed; a
/// single variant over `hangLimit` fails (a hang, not a slow machine).
final class AllFixturesRobustnessTests: XCTestCase {
    static let hangLimit = 60.0

    static var variantsPerFixture: Int {
        Int(ProcessInfo.processInfo.environment["METASCRUB_ROBUST_VARIANTS"] ?? "") ?? 20
    }

    /// `clean-ok` rows of Fixtures/MANIFEST.tsv.
    static func cleanableFixtures() -> [String] {
        guard let text = try? String(contentsOfFile: Fixture.path("MANIFEST.tsv"), encoding: .utf8) else { return [] }
        return text.split(separator: "\n").dropFirst().compactMap { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count >= 5, fields[4] == "clean-ok" else { return nil }
            return String(fields[0])
        }
    }

    /// Half truncations spread over the file, half seeded bit flips (1 to 4 per variant).
    static func variants(of bytes: [UInt8], count: Int, seed: UInt64) -> [(String, [UInt8])] {
        var out: [(String, [UInt8])] = []
        let cuts = max(1, count / 2)
        for k in 1...cuts {
            let cut = bytes.count * k / (cuts + 1)
            out.append(("cut at \(cut)", Array(bytes[..<cut])))
        }
        var state = seed
        func next() -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int(truncatingIfNeeded: state >> 33)
        }
        for k in 0..<max(1, count - cuts) where !bytes.isEmpty {
            var mutated = bytes
            for _ in 0..<(1 + k % 4) {
                let at = next() % mutated.count
                mutated[at] ^= UInt8(1 << (next() % 8))
            }
            out.append(("flips #\(k)", mutated))
        }
        return out
    }

    func testEveryCleanableFixtureSurvivesTruncationAndBitFlips() {
        let fixtures = Self.cleanableFixtures()
        XCTAssertGreaterThan(fixtures.count, 50, "MANIFEST.tsv has too few clean-ok rows")
        let dir = TempDir()
        var runs = 0, cleaned = 0, errors = 0
        var slowest: (Double, String) = (0, "")
        var total = 0.0
        for (index, relative) in fixtures.enumerated() {
            guard let data = FileManager.default.contents(atPath: Fixture.path(relative)) else {
                XCTFail("missing fixture \(relative)")
                continue
            }
            let ext = (relative as NSString).pathExtension
            for (n, (what, bytes)) in Self.variants(of: [UInt8](data), count: Self.variantsPerFixture, seed: 0x5EED &+ UInt64(index)).enumerated() {
                let input = dir.file("v-\(index)-\(n).\(ext)")
                let output = dir.file("v-\(index)-\(n)-out.\(ext)")
                _ = FileManager.default.createFile(atPath: input, contents: Data(bytes))
                let start = DispatchTime.now().uptimeNanoseconds
                let report = Run.clean(input, to: output)
                let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
                total += seconds
                runs += 1
                if seconds > slowest.0 { slowest = (seconds, "\(relative) \(what)") }
                XCTAssertLessThan(seconds, Self.hangLimit, "\(relative) \(what): \(seconds) s")
                switch report.status {
                case .cleaned, .clean, .skipped:
                    cleaned += 1
                    if report.status != .skipped {
                        XCTAssertTrue(FileManager.default.fileExists(atPath: output), "\(relative) \(what): no output")
                    }
                case .error:
                    errors += 1
                    XCTAssertNotNil(report.error, "\(relative) \(what): error without a message")
                    XCTAssertFalse(FileManager.default.fileExists(atPath: output), "\(relative) \(what): output after an error")
                default:
                    XCTFail("\(relative) \(what): unexpected status \(report.status)")
                }
                try? FileManager.default.removeItem(atPath: input)
                try? FileManager.default.removeItem(atPath: output)
            }
        }
        print(String(format: "robustness: %d fixtures, %d variants (%d clean/skipped, %d typed errors), %.1f s in all, slowest %.3f s (%@)",
                     fixtures.count, runs, cleaned, errors, total, slowest.0, slowest.1))
    }

    /// Inputs the fuzzers found crashing (Fixtures/fuzz/): each must now end in a result or a typed error.
    func testFuzzerReproducers() throws {
        let root = Fixture.path("fuzz")
        let names = ((try? FileManager.default.subpathsOfDirectory(atPath: root)) ?? []).filter {
            var isDir: ObjCBool = false
            return FileManager.default.fileExists(atPath: root + "/" + $0, isDirectory: &isDir) && !isDir.boolValue && !$0.hasSuffix(".md")
        }.sorted()
        try XCTSkipIf(names.isEmpty, "no fuzzer reproducers")
        let dir = TempDir()
        for name in names {
            let output = dir.file("out-" + (name as NSString).lastPathComponent)
            _ = Run.scan(root + "/" + name)
            let report = Run.clean(root + "/" + name, to: output)
            if report.status == .error {
                XCTAssertFalse(FileManager.default.fileExists(atPath: output), name)
            }
        }
    }
}
