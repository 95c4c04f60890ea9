// SPDX-License-Identifier: GPL-3.0-or-later
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A progress bar for long folder runs: files, bytes, rate and ETA on one line, redrawn in place with `\r`
/// at most every `interval` seconds so a fast run does not spend its time drawing. The caller decides
/// whether to show it at all (standard error is a terminal, not --quiet) and where the text goes.
public final class ProgressMeter: Sendable {
    struct State {
        var totalFiles = 0
        var totalBytes: Int64 = 0
        var files = 0
        var bytes: Int64 = 0
        var started = 0.0
        var lastDraw = -Double.infinity
        var drawn = false
    }

    private let state = Mutex(State())
    private let write: @Sendable (String) -> Void
    private let width: Int
    private let interval: Double
    private let now: @Sendable () -> Double

    public init(width: Int = 80, interval: Double = 0.1, now: @escaping @Sendable () -> Double = ProgressMeter.monotonicSeconds,
                write: @escaping @Sendable (String) -> Void) {
        self.width = max(40, width)
        self.interval = interval
        self.now = now
        self.write = write
    }

    public func begin(files: Int, bytes: Int64) {
        let line = state.withLock { s -> String? in
            s.totalFiles = files
            s.totalBytes = bytes
            s.started = now()
            return draw(&s, force: true)
        }
        if let line { write(line) }
    }

    public func advance(bytes: Int64) {
        let line = state.withLock { s -> String? in
            s.files += 1
            s.bytes += bytes
            return draw(&s, force: s.files == s.totalFiles)
        }
        if let line { write(line) }
    }

    /// Clears the bar so what follows starts on a clean line.
    public func finish() {
        let drawn = state.withLock { $0.drawn }
        if drawn { write("\r\u{1B}[K") }
    }

    public var elapsed: Double { state.withLock { now() - $0.started } }

    private func draw(_ s: inout State, force: Bool) -> String? {
        let t = now()
        guard force || t - s.lastDraw >= interval else { return nil }
        s.lastDraw = t
        s.drawn = true
        return "\r" + Self.line(files: s.files, totalFiles: s.totalFiles, bytes: s.bytes, totalBytes: s.totalBytes,
                                elapsed: t - s.started, width: width) + "\u{1B}[K"
    }

    /// The bar's text (no control characters), fitted into `width` columns.
    static func line(files: Int, totalFiles: Int, bytes: Int64, totalBytes: Int64, elapsed: Double, width: Int) -> String {
        let fraction = totalBytes > 0 ? Double(bytes) / Double(totalBytes) : totalFiles > 0 ? Double(files) / Double(totalFiles) : 1
        let rate = elapsed > 0.05 ? Double(bytes) / elapsed : 0
        let eta: String
        if files >= totalFiles { eta = "done" }
        else if rate > 0 { eta = "ETA " + duration(Double(totalBytes - bytes) / rate) }
        else { eta = "ETA --:--" }
        let percent = String(Int((fraction * 100).rounded(.down)))
        let tail = " \(files)/\(totalFiles) files  \(size(bytes))/\(size(totalBytes))  \(size(Int64(rate)))/s  \(eta)"
        let head = String(repeating: " ", count: max(0, 3 - percent.count)) + percent + "% "
        let barWidth = max(10, width - head.count - tail.count - 3)
        let filled = min(barWidth, Int((Double(barWidth) * fraction).rounded(.down)))
        let bar = "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: barWidth - filled) + "]"
        return String((head + bar + tail).prefix(width - 1))
    }

    static func size(_ bytes: Int64) -> String {
        let units = ["B", "kB", "MB", "GB", "TB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1000, unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        return unit == 0 ? "\(bytes) B" : String(format1(value)) + " " + units[unit]
    }

    private static func format1(_ v: Double) -> String {
        let tenths = Int((v * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }

    static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0 else { return "--:--" }
        let s = Int(seconds.rounded(.up))
        return s >= 3600 ? "\(s / 3600):" + two((s % 3600) / 60) + ":" + two(s % 60) : "\(s / 60):" + two(s % 60)
    }

    private static func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }

    public static let monotonicSeconds: @Sendable () -> Double = {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
