// SPDX-License-Identifier: GPL-3.0-or-later
import Synchronization

/// Bounded concurrency: at most `workers` worker processes at once, and at most `workers + queue` requests
/// admitted (uploading, waiting for a worker or being processed). A request beyond that is refused at once
/// (429) rather than parked on an unbounded queue.
final class Admission: Sendable {
    let workers: Int
    let capacity: Int
    private struct State {
        var admitted = 0
        var running = 0
        var waiting: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())

    init(workers: Int, queue: Int) {
        self.workers = workers
        self.capacity = workers + queue
    }

    var snapshot: (admitted: Int, running: Int) { state.withLock { ($0.admitted, $0.running) } }

    /// `body` runs admitted; the admission ends however it returns. Throws `ServeError.full` when no room is left.
    func whileAdmitted<T>(_ body: () async throws -> T) async throws -> T {
        let admitted = state.withLock { s in
            guard s.admitted < capacity else { return false }
            s.admitted += 1
            return true
        }
        guard admitted else { throw ServeError.full }
        defer { state.withLock { $0.admitted -= 1 } }
        return try await body()
    }

    /// `body` runs holding one of the `workers` slots; waits (admitted) for one when all are busy.
    func withWorker<T>(_ body: () async throws -> T) async throws -> T {
        await acquireWorker()
        defer { releaseWorker() }
        return try await body()
    }

    private func acquireWorker() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { s in
                if s.running < workers {
                    s.running += 1
                    return true
                }
                s.waiting.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Hands the slot straight to the next waiter, if any.
    private func releaseWorker() {
        let next = state.withLock { s -> CheckedContinuation<Void, Never>? in
            if s.waiting.isEmpty {
                s.running -= 1
                return nil
            }
            return s.waiting.removeFirst()
        }
        next?.resume()
    }
}
