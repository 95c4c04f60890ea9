// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

extension Trailer {
    /// The item standing for bytes after a container's end (`png:trailer`, `webp:trailer`, `gif:trailer`),
    /// described from its first and last bytes.
    static func item(key: String, range: Range<Int64>, in source: any ByteSource, location: String, after what: String) throws -> MetadataItem {
        let length = Int64(range.count)
        let head = try source.read(at: range.lowerBound, count: Int(min(length, 64)))
        let tail = try source.read(at: max(range.lowerBound, range.upperBound - 8), count: Int(min(length, 8)))
        return MetadataItem(key: key, category: .embedded, location: location, offset: range.lowerBound, length: length,
                            detail: describe(head: head, tail: tail, length: length) + " after \(what)")
    }
}
