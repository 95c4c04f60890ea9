// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import XCTest

/// What every serve test shares: a scratch folder, the oracles checked up front, servers stopped at the end.
class ServeTestCase: XCTestCase {
    var scratch: String!
    var servers: [ServeProcess] = []

    override func setUpWithError() throws {
        scratch = NSTemporaryDirectory() + "metascrub-serve-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: ServeProcess.binary), "build metascrub first")
        for tool in ["/usr/bin/curl", "/usr/bin/exiftool", "/usr/bin/djpeg", "/usr/bin/ffmpeg"] {
            XCTAssertTrue(FileManager.default.isExecutableFile(atPath: tool), "oracle missing: \(tool) (scripts/install-deps)")
        }
    }

    override func tearDown() {
        for server in servers { server.stop() }
        try? FileManager.default.removeItem(atPath: scratch)
    }

    func start(_ arguments: [String] = [], stallMs: Int? = nil, environment: [String: String] = [:],
               user: (uid: UInt32, gid: UInt32)? = nil, defaultMemorySpool: Bool = false) throws -> ServeProcess {
        let directory = scratch + "/server-\(servers.count)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let server = try ServeProcess(arguments, stallMs: stallMs, environment: environment, user: user,
                                      defaultMemorySpool: defaultMemorySpool, scratch: directory)
        servers.append(server)
        return server
    }

    /// This process has CAP_SYS_ADMIN (as root in a container it may not) and the kernel has transparent huge
    /// pages (the `huge=` mount option needs them).
    static var mayMountTmpfs: Bool {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("CapEff:") }),
              let effective = UInt64(line.dropFirst("CapEff:".count).trimmingCharacters(in: .whitespaces), radix: 16)
        else { return false }
        let capSysAdmin: UInt64 = 1 << 21
        return effective & capSysAdmin != 0
            && FileManager.default.fileExists(atPath: "/sys/kernel/mm/transparent_hugepage")
    }

    func write(_ data: Data, _ name: String) -> String {
        let path = scratch + "/" + name
        FileManager.default.createFile(atPath: path, contents: data)
        return path
    }

    /// exiftool's tag names (group:tag) in a file.
    func exifKeys(_ path: String) -> [String] {
        let out = Curl.run(["-j", "-a", "-G1", "-ee", path], executable: "/usr/bin/exiftool")
        guard let json = try? JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [[String: Any]] else { return [] }
        return json.first.map { Array($0.keys) } ?? []
    }
}
