// SPDX-License-Identifier: GPL-3.0-or-later

extension Array where Element == Range<Int64> {
    /// The sorted union of the ranges, overlapping and adjacent ones joined, empty ones dropped.
    public func union() -> [Range<Int64>] {
        var out: [Range<Int64>] = []
        for r in filter({ !$0.isEmpty }).sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = out.last, r.lowerBound <= last.upperBound {
                out[out.count - 1] = last.lowerBound..<Swift.max(last.upperBound, r.upperBound)
            } else {
                out.append(r)
            }
        }
        return out
    }
}
