// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import XCTest

/// The server's memory does not grow with the report: the worker writes the report the client gets, and the
/// server streams it from the file, reading only the worker's small summary.
final class ServeMemoryTests: ServeTestCase {
    /// A PNG with 50,000 tiny tEXt chunks (15 bytes each): every one is a finding, so the report is ~23× the upload.
    func manyTextChunksPNG() throws -> String {
        let path = scratch + "/many-text.png"
        let script = """
            import struct, sys, zlib
            def chunk(t, d): return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d) & 0xffffffff)
            png = b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', 1, 1, 8, 2, 0, 0, 0))
            png += b''.join(chunk(b'tEXt', b'k\\x00v') for _ in range(50000))
            png += chunk(b'IDAT', zlib.compress(b'\\x00\\x00\\x00\\x00')) + chunk(b'IEND', b'')
            open(sys.argv[1], 'wb').write(png)
            """
        let run = Curl.run(["-c", script, path], executable: "/usr/bin/python3")
        XCTAssertEqual(run.status, 0, run.stderr)
        return path
    }

    /// kB from /proc/PID/status (`VmRSS`, `VmHWM`).
    func memory(_ pid: Int32, _ field: String) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix(field + ":") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? -1
    }

    func testPeakMemoryIsFlatInTheReportSize() throws {
        let upload = try manyTextChunksPNG()
        let uploadBytes = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: upload)[.size] as? Int)
        let server = try start()
        let pid = server.process.processIdentifier
        // Warm up the paths (first-use allocations), then measure from the resident size at rest.
        _ = Curl.post(server.base + "/v1/scan", file: ServeProcess.fixture("jpeg/gps-full.jpg"), scratch: scratch)
        let before = memory(pid, "VmRSS")
        let scan = Curl.post(server.base + "/v1/scan", file: upload, scratch: scratch)
        XCTAssertEqual(scan.status, 200)
        XCTAssertGreaterThan(scan.body.count, 20 * uploadBytes, "the report is not much larger than the upload")
        XCTAssertTrue(scan.bodyText.contains("\"path\" : \"upload\""))
        XCTAssertFalse(scan.bodyText.contains(server.spool) || scan.bodyText.contains(server.memorySpool),
                       "server paths leak into the report")
        let clean = Curl.post(server.base + "/v1/clean?report=json", file: upload, scratch: scratch)
        XCTAssertEqual(clean.status, 200)
        let peak = memory(pid, "VmHWM")
        // Before: the server held the report ~6 times over (+160 MB for this one). Now: buffers only.
        XCTAssertLessThan(peak - before, 24 << 10, "peak \(peak) kB, at rest \(before) kB, report \(scan.body.count) bytes")
    }
}
