// SPDX-License-Identifier: GPL-3.0-or-later
import CPlatform
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The temp files this process has created and not yet renamed or removed, so that Ctrl-C or a `kill` removes
/// them before the process exits instead of leaving them for a later run to sweep (a `git add -A` in between
/// would commit them).
///
/// Creating, renaming and removing a temp file each happen under one lock with the bookkeeping, and stopping
/// takes the same lock: a temp file is then either renamed over its target (the target is the complete, verified
/// output) or removed (the target is untouched), never half of either, and none is created after the stop.
public final class RunTemporaries: Sendable {
    public static let shared = RunTemporaries()

    struct State {
        var live: Set<String> = []
        var stopping = false
        var renamed = 0
    }

    private let state = Mutex(State())

    /// Runs `create` (which opens a new temp file at `path` and returns its descriptor, or -1 with errno set) and
    /// records the path. Once the run is stopping nothing is created: -1 with errno EINTR.
    func create(_ path: String, _ create: () -> Int32) -> Int32 {
        state.withLock { s in
            guard !s.stopping else {
                errno = EINTR
                return -1
            }
            let fd = create()
            if fd >= 0 { s.live.insert(path) }
            return fd
        }
    }

    /// Runs `rename` (0 or -1 with errno set) for a temp file of this run; afterwards it is no longer one.
    func rename(_ from: String, _ rename: () -> Int32) -> Int32 {
        state.withLock { s in
            guard !s.stopping else {
                errno = EINTR
                return -1
            }
            let result = rename()
            if result == 0, s.live.remove(from) != nil { s.renamed += 1 }
            return result
        }
    }

    func remove(_ path: String, _ unlink: () -> Void) {
        state.withLock { s in
            unlink()
            s.live.remove(path)
        }
    }

    /// Removes every temp file still open and refuses any further create or rename. Returns how many temp files
    /// were removed and how many had already replaced (or become) their targets.
    public func stop() -> (removed: Int, renamed: Int) {
        state.withLock { s in
            s.stopping = true
            for path in s.live { _ = unlink(path) }
            defer { s.live.removeAll() }
            return (s.live.count, s.renamed)
        }
    }
}

/// SIGINT and SIGTERM during a run: this run's temp files are removed, a line says what was done, and the
/// process exits 130 or 143 (128 + the signal, as shells report a process killed by it).
public enum InterruptHandler {
    /// Installs the handler (once; later calls do nothing). `what` names what the written files were, for the summary.
    public static func install(noun: String = "file(s) written") {
        let fd = ms_signal_pipe_install()
        guard fd >= 0 else { return }
        let thread = Thread {
            var byte: UInt8 = 0
            while read(fd, &byte, 1) < 0, errno == EINTR {}
            let signal = Int32(byte)
            let (removed, renamed) = RunTemporaries.shared.stop()
            let name = signal == SIGINT ? "SIGINT" : signal == SIGTERM ? "SIGTERM" : "signal \(signal)"
            let text = "\nmetascrub: interrupted by \(name): \(renamed) \(noun) before it (complete and verified); "
                + "every other file is as it was; \(removed) temporary file(s) of this run removed\n"
            let bytes = Array(text.utf8)
            _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
            _exit(128 + signal)
        }
        thread.start()
    }
}
