// SPDX-License-Identifier: GPL-3.0-or-later
import Hummingbird
import Synchronization

/// The slowest a body may arrive: after `grace`, at least `bytesPerSecond` on average over the time since. A
/// client that trickles a byte every few seconds loses its upload slot (408) instead of holding it for as long
/// as the connection's idle timeout allows.
struct UploadPace: Sendable {
    var bytesPerSecond: Int64
    var grace: Duration

    /// Runs `receive`, which reports its progress in `received`, and throws `ServeError.slowUpload` (cancelling it)
    /// as soon as it falls behind. Checked every 250 ms, whether or not bytes arrive.
    func enforce(_ receive: @escaping @Sendable (UploadProgress) async throws -> Int64) async throws -> Int64 {
        let received = UploadProgress()
        guard bytesPerSecond > 0 else { return try await receive(received) }
        let started = ContinuousClock.now
        return try await withThrowingTaskGroup(of: Int64?.self) { group in
            group.addTask { try await receive(received) }
            group.addTask {
                while true {
                    try await Task.sleep(for: .milliseconds(250))
                    let late = ContinuousClock.now - started - grace
                    guard late > .zero else { continue }
                    let (seconds, attoseconds) = late.components
                    let owed = Double(bytesPerSecond) * (Double(seconds) + Double(attoseconds) / 1e18)
                    if Double(received.bytes.load(ordering: .relaxed)) < owed { throw ServeError.slowUpload }
                }
            }
            defer { group.cancelAll() }
            while let result = try await group.next() {
                if let total = result { return total }
            }
            return received.bytes.load(ordering: .relaxed)
        }
    }
}

/// Bytes of a body spooled so far, shared between the task reading it and the one watching its pace.
final class UploadProgress: Sendable {
    let bytes = Atomic<Int64>(0)
}
