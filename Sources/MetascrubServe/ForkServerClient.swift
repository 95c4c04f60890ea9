// SPDX-License-Identifier: GPL-3.0-or-later
import CSandbox
import Foundation
import MetascrubSandbox
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The server's side of `metascrub worker --fork-server` (issue 33 item 6): one long-lived, warm parent that forks
/// a freshly confined child per file, so a request no longer pays for an exec. Jobs and kills go down one Unix
/// socket (send with MSG_NOSIGNAL: a dead fork server must not SIGPIPE the server); a reader thread turns the
/// `ended` lines into outcomes. Until the fork server said `ready`, and for good once it is gone, `run` returns
/// nil and the launcher execs a worker as before.
final class ForkServerClient: Sendable {
    private struct State {
        var ready = false
        var alive = true
        var nextID: Int64 = 1
        var pending: [Int64: CheckedContinuation<WorkerOutcome, Never>] = [:]
    }
    private let state = Mutex(State())
    /// Held while a line is sent, apart from `state`, so the reply reader never waits on a blocked sender.
    private let writer = Mutex(())
    private let socket: Int32
    private let pid: pid_t

    private init(socket: Int32, pid: pid_t) {
        self.socket = socket
        self.pid = pid
    }

    /// Starts the fork server, or nil when it cannot be started (the server then execs every worker). It warms up
    /// in a folder of its own inside `warmUpIn` (the spool: the root file system may be read-only).
    static func start(executable: String, warmUpIn: String) -> ForkServerClient? {
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            return nil
        }
        defer { close(pair[1]) }
        var pid: pid_t = 0
        let words: [String] = [executable, "worker", "--fork-server", "--warm-up-in", warmUpIn]
        let argv = words.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        guard metascrub_spawn_piped(executable, argv, pair[1], pair[1], &pid) == 0 else {
            close(pair[0])
            return nil
        }
        let client = ForkServerClient(socket: pair[0], pid: pid)
        let reader = Thread { client.readReplies() }
        reader.name = "fork-server-replies"
        reader.start()
        client.waitUntilReady(limit: .seconds(5))
        return client
    }

    /// At start-up only, so the first requests already fork (a slow fork server is used once it is ready).
    private func waitUntilReady(limit: Duration) {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline, state.withLock({ !$0.ready && $0.alive }) {
            Thread.sleep(forTimeInterval: 0.002)
        }
    }

    /// The worker's outcome, or nil when the fork server is not (or no longer) there to run it.
    func run(_ job: WorkerJob, timeout: Duration) async -> WorkerOutcome? {
        // One line: JSON escapes every control character inside a string.
        guard let json = try? JSONEncoder().encode(job), let text = String(data: json, encoding: .utf8) else {
            return nil
        }
        let id: Int64? = state.withLock { s in
            guard s.ready, s.alive else { return nil }
            defer { s.nextID += 1 }
            return s.nextID
        }
        guard let id else { return nil }
        let watch = WorkerWatch()
        return await withTaskCancellationHandler {
            watch.started(timeout: timeout) { [self] in send("kill \(id)\n") }
            if Task.isCancelled { watch.kill() }
            let ended: WorkerOutcome = await withCheckedContinuation { continuation in
                let registered = state.withLock { s in
                    guard s.alive else { return false }
                    s.pending[id] = continuation
                    return true
                }
                guard registered else { return continuation.resume(returning: .failedToStart("fork server ended")) }
                if !send("job \(id) \(text)\n") { finish(id, .failedToStart("fork server unreachable")) }
            }
            watch.ended()
            return watch.timedOut ? .timedOut : ended
        } onCancel: {
            watch.kill()
        }
    }

    @discardableResult
    private func send(_ line: String) -> Bool {
        // One writer at a time, so lines never interleave; the fork server reads them at once.
        writer.withLock { _ in
            var bytes = Array(line.utf8)[...]
            while !bytes.isEmpty {
                let sent = bytes.withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if sent < 0 && errno == EINTR { continue }
                if sent <= 0 { return false }
                bytes = bytes.dropFirst(sent)
            }
            return true
        }
    }

    private func finish(_ id: Int64, _ outcome: WorkerOutcome) {
        state.withLock { $0.pending.removeValue(forKey: id) }?.resume(returning: outcome)
    }

    /// On its own thread for the server's lifetime: `ready`, `ended ID EXITED CODE`, `failed ID ERRNO`.
    private func readReplies() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        var line = [UInt8]()
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            for byte in buffer[..<count] {
                if byte != UInt8(ascii: "\n") {
                    line.append(byte)
                    continue
                }
                handle(String(decoding: line, as: UTF8.self).split(separator: " "))
                line.removeAll(keepingCapacity: true)
            }
        }
        // Gone (crashed, killed): its children died with it (PDEATHSIG); new requests exec workers.
        let orphans = state.withLock { s in
            s.alive = false
            defer { s.pending.removeAll() }
            return Array(s.pending.values)
        }
        orphans.forEach { $0.resume(returning: .failedToStart("fork server ended")) }
        metascrub_reap(pid)
    }

    private func handle(_ fields: [Substring]) {
        switch (fields.first, fields.count) {
        case ("ready", 1):
            state.withLock { $0.ready = true }
        case ("ended", 4):
            guard let id = Int64(fields[1]), let exited = Int32(fields[2]), let code = Int32(fields[3]) else { return }
            finish(id, exited != 0 ? .exited(code) : .signalled(code))
        case ("failed", 3):
            guard let id = Int64(fields[1]) else { return }
            finish(id, .failedToStart("fork: \(fields[2])"))
        default:
            break
        }
    }
}
