// SPDX-License-Identifier: GPL-3.0-or-later
import Synchronization

/// Two kinds of slot, so a slow client can hold only what is cheap. Upload slots (`uploads`) are held while a
/// body is spooled: many, and a client too slow to keep the minimum upload rate loses its slot (408). Worker
/// slots are taken only once the body is on disk: `workers` run at once and `queue` more wait for one, in order.
/// A request is refused with 429 only when that verified work is really queued (all workers busy and `queue`
/// spooled files waiting), or when every upload slot is taken.
final class Admission: Sendable {
    let workers: Int
    let queue: Int
    let uploads: Int
    private struct State {
        var uploading = 0
        var running = 0
        var waiting: [CheckedContinuation<Bool, Never>] = []
    }
    private let state = Mutex(State())

    init(workers: Int, queue: Int, uploads: Int) {
        self.workers = workers
        self.queue = queue
        self.uploads = uploads
    }

    struct Snapshot: Sendable, Equatable {
        var uploading: Int
        var queued: Int
        var running: Int
    }

    var snapshot: Snapshot {
        state.withLock { Snapshot(uploading: $0.uploading, queued: $0.waiting.count, running: $0.running) }
    }

    /// True when a spooled file would find every worker busy and the queue full: refuse before reading a body.
    var workQueueFull: Bool { state.withLock { $0.running >= workers && $0.waiting.count >= queue } }

    /// `body` runs holding an upload slot. Throws `ServeError.full` when every upload slot is taken.
    func whileUploading<T>(_ body: () async throws -> T) async throws -> T {
        let admitted = state.withLock { s in
            guard s.uploading < uploads else { return false }
            s.uploading += 1
            return true
        }
        guard admitted else { throw ServeError.full }
        defer { state.withLock { $0.uploading -= 1 } }
        return try await body()
    }

    /// `body` runs holding one of the `workers` slots; waits (in order) for one when all are busy, or throws
    /// `ServeError.full` when `queue` spooled files are already waiting.
    func withWorker<T>(_ body: () async throws -> T) async throws -> T {
        try await acquireWorker()
        defer { releaseWorker() }
        return try await body()
    }

    private func acquireWorker() async throws {
        // true: a slot is ours (now, or handed over by `releaseWorker`); false: the queue is full.
        let granted = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let now = state.withLock { s -> Bool? in
                if s.running < workers {
                    s.running += 1
                    return true
                }
                guard s.waiting.count < queue else { return false }
                s.waiting.append(continuation)
                return nil
            }
            if let now { continuation.resume(returning: now) }
        }
        guard granted else { throw ServeError.full }
    }

    /// Hands the slot straight to the next waiter, if any.
    private func releaseWorker() {
        let next = state.withLock { s -> CheckedContinuation<Bool, Never>? in
            if s.waiting.isEmpty {
                s.running -= 1
                return nil
            }
            return s.waiting.removeFirst()
        }
        next?.resume(returning: true)
    }
}
