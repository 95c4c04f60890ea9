// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// The real `metascrub serve` on a free loopback port, driven by curl. Oracles (curl, exiftool, djpeg, ffmpeg)
/// missing make a test fail, never skip.
final class ServeProcess {
    static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static var binary: String {
        let products = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for candidate in [products, products.deletingLastPathComponent()] {
            let path = candidate.appendingPathComponent("metascrub").path
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return repo.appendingPathComponent(".build/debug/metascrub").path
    }

    static func fixture(_ name: String) -> String { repo.appendingPathComponent("Fixtures/\(name)").path }

    let process = Process()
    let port: Int
    let spool: String
    /// The memory spool for small uploads: a folder of this server's own on /dev/shm, so tests see its jobs too.
    let memorySpool: String
    let log: String
    var base: String { "http://127.0.0.1:\(port)" }

    /// `stallMs`: the worker test hook (METASCRUB_WORKER_STALL_MS), to keep a worker busy long enough to observe.
    /// `user`: run the server as this uid and gid (through setpriv, without capabilities) instead of the test's.
    /// `defaultMemorySpool`: name no memory spool, so the server picks its own (`memorySpool` then stays empty).
    init(_ arguments: [String] = [], stallMs: Int? = nil, environment extra: [String: String] = [:],
         user: (uid: UInt32, gid: UInt32)? = nil, defaultMemorySpool: Bool = false, scratch: String) throws {
        port = try Self.freePort()
        spool = scratch + "/spool"
        memorySpool = "/dev/shm/metascrub-test-" + UUID().uuidString
        log = scratch + "/server.log"
        try FileManager.default.createDirectory(atPath: spool, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: memorySpool, withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: log, contents: nil)
        // No drain grace unless a test asks for one: every test stops its server with SIGTERM.
        let grace = arguments.contains("--drain-grace") ? [] : ["--drain-grace", "0"]
        let memory = arguments.contains("--memory-spool") || defaultMemorySpool ? [] : ["--memory-spool", memorySpool]
        let serve = ["serve", "--no-config", "--listen", "127.0.0.1:\(port)", "--spool", spool]
            + memory + grace + arguments
        if let user {
            _ = chown(spool, user.uid, user.gid)
            _ = chown(memorySpool, user.uid, user.gid)
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = ["--reuid=\(user.uid)", "--regid=\(user.gid)", "--clear-groups", "--inh-caps=-all",
                                 "--bounding-set=-all", "--", Self.binary] + serve
        } else {
            process.executableURL = URL(fileURLWithPath: Self.binary)
            process.arguments = serve
        }
        var environment = ProcessInfo.processInfo.environment
        if let stallMs { environment["METASCRUB_WORKER_STALL_MS"] = String(stallMs) }
        environment.merge(extra) { $1 }
        process.environment = environment
        let handle = FileHandle(forWritingAtPath: log)!
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if Curl.run(["-s", "-o", "/dev/null", "-w", "%{http_code}", base + "/healthz"]).stdout == "200" { return }
            guard process.isRunning else { break }
            usleep(50_000)
        }
        throw NSError(domain: "serve", code: 1, userInfo: [NSLocalizedDescriptionKey: "server did not start: \(serverLog)"])
    }

    var serverLog: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

    func stop() {
        defer { try? FileManager.default.removeItem(atPath: memorySpool) }
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
    }

    /// Worker processes that are still running: the server's own children (exec'd workers) and those of its fork
    /// server (forked workers), never the fork server itself.
    var workerPIDs: [pid_t] {
        let forkServer = forkServerPID
        return Self.children(of: process.processIdentifier).flatMap { pid in
            forkServer == pid ? Self.workers(of: pid) : [pid]
        }
    }

    /// A fork server's children that have a file: not its spare, which waits for the next job.
    static func workers(of forkServer: pid_t) -> [pid_t] { children(of: forkServer).filter { !isSpare($0) } }

    /// A fork server's spare: forked ahead, named apart until its job comes.
    static func spares(of forkServer: pid_t) -> [pid_t] { children(of: forkServer).filter(isSpare) }

    private static func isSpare(_ pid: pid_t) -> Bool {
        (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)) == "metascrub-spare\n"
    }

    /// The server's `metascrub worker --fork-server`, if it started one.
    var forkServerPID: pid_t? {
        Self.children(of: process.processIdentifier).first { pid in
            let command = (try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8)) ?? ""
            return command.split(separator: "\0").contains("--fork-server")
        }
    }

    static func children(of parent: pid_t) -> [pid_t] {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
        return entries.compactMap { name -> pid_t? in
            guard let pid = pid_t(name), let stat = try? String(contentsOfFile: "/proc/\(name)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return nil }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 2 && pid_t(fields[1]) == parent && fields[0] != "Z" ? pid : nil
        }
    }

    /// Waits until a worker is running; returns its PID.
    func waitForWorker(timeout: TimeInterval = 20) -> pid_t? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let pid = workerPIDs.first { return pid }
            usleep(10_000)
        }
        return nil
    }

    /// Job folders left in either spool (there must be none once requests are answered). A job goes when its
    /// response has been sent, which the server finishes a moment after the client has the last byte: waited
    /// for, up to two seconds.
    var spoolJobs: [String] {
        var left = jobs(in: spool) + jobs(in: memorySpool)
        for _ in 0..<100 where !left.isEmpty {
            usleep(20_000)
            left = jobs(in: spool) + jobs(in: memorySpool)
        }
        return left
    }

    /// Job folders in one spool: the entries of its server folders (in `metascrub-<uid>/metascrub-serve-*`) but
    /// the fork server's warm-up folder.
    func jobs(in spool: String) -> [String] {
        serverFolders(in: spool).flatMap { folder in
            ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasPrefix("job-") }
                .map { folder + "/" + $0 }
        }
    }

    /// The server folders in a spool (one while a server runs).
    func serverFolders(in spool: String) -> [String] {
        let homes = ((try? FileManager.default.contentsOfDirectory(atPath: spool)) ?? [])
            .filter { $0.hasPrefix("metascrub-") }
        return homes.flatMap { home in
            ((try? FileManager.default.contentsOfDirectory(atPath: spool + "/" + home)) ?? [])
                .filter { $0.hasPrefix("metascrub-serve-") }.map { spool + "/" + home + "/" + $0 }
        }
    }

    /// 127.0.0.1:`port` (0: any free port, when bound).
    static func loopback(port: Int = 0) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        return address
    }

    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = loopback()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw NSError(domain: "serve", code: 2) }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// One curl run: status code, response headers, body file.
struct CurlResult {
    var status: Int
    var headers: [String: String]
    var body: Data
    var bodyText: String { String(decoding: body, as: UTF8.self) }
}

enum Curl {
    struct Output {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    static func run(_ arguments: [String], executable: String = "/usr/bin/curl") -> Output {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        do { try process.run() } catch { return Output(status: 127, stdout: "", stderr: "\(executable): \(error)") }
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Output(status: process.terminationStatus, stdout: String(decoding: o, as: UTF8.self), stderr: String(decoding: e, as: UTF8.self))
    }

    /// A started request, to be collected with `finish()`.
    final class Pending {
        let process = Process()
        let bodyPath: String
        let headerPath: String
        let statusPipe = Pipe()

        init(_ arguments: [String], scratch: String) {
            let id = UUID().uuidString
            bodyPath = scratch + "/body-" + id
            headerPath = scratch + "/headers-" + id
            process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
            process.arguments = ["-s", "-o", bodyPath, "-D", headerPath, "-w", "%{http_code}"] + arguments
            process.standardOutput = statusPipe
            process.standardError = FileHandle.nullDevice
            try? process.run()
        }

        func finish() -> CurlResult {
            let status = statusPipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            var headers: [String: String] = [:]
            let raw = (try? String(contentsOfFile: headerPath, encoding: .utf8)) ?? ""
            for line in raw.components(separatedBy: "\r\n") {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            let body = FileManager.default.contents(atPath: bodyPath) ?? Data()
            return CurlResult(status: Int(String(decoding: status, as: UTF8.self)) ?? 0, headers: headers, body: body)
        }
    }

    /// `POST url` with `file` as the raw body.
    static func post(_ url: String, file: String, extra: [String] = [], scratch: String) -> CurlResult {
        start(url, file: file, extra: extra, scratch: scratch).finish()
    }

    static func start(_ url: String, file: String, extra: [String] = [], scratch: String) -> Pending {
        let type = extra.contains { $0.lowercased().hasPrefix("content-type:") } ? [] : ["-H", "Content-Type: application/octet-stream"]
        return Pending(["-X", "POST", "--data-binary", "@" + file] + type + extra + [url], scratch: scratch)
    }

    static func get(_ url: String, extra: [String] = [], scratch: String) -> CurlResult {
        Pending(extra + [url], scratch: scratch).finish()
    }
}
