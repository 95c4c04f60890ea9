// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

extension ItemCollector {
    /// Bytes the windows of `inspectWhole` share, so a position or a path cut by a window's edge is still seen whole.
    static let windowOverlap = 4096

    /// Itemises all of a kept-whole item's payload, however long (`inspect` looks at its first part only): a text
    /// chunk whose position sits after its first MiB is read there too. Returns the new items' indexes.
    @discardableResult
    mutating func inspectWhole(_ parent: Int, payload: [UInt8], origin: Int64) -> [Int] {
        let window = ContentInspector.limit
        var found: [Int] = []
        var start = 0
        repeat {
            let end = min(payload.count, start + window)
            found += inspect(parent, payload: Array(payload[start..<end]), origin: origin)
            start = end - Self.windowOverlap
        } while start + Self.windowOverlap < payload.count
        return found
    }
}
