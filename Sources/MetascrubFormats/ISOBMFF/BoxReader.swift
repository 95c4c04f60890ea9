// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// How far a box walk may go: hostile files must not make it recurse or allocate without bound.
public struct BoxLimits: Sendable {
    /// Nesting depth below the top level.
    public var maxDepth: Int
    /// Boxes in one container (fragmented movies have thousands at top level; item properties a few hundred).
    public var maxBoxesPerContainer: Int
    /// Largest payload read into memory at once (`meta`, `moov`); sample data is never read whole.
    public var maxPayloadRead: Int

    public init(maxDepth: Int = 32, maxBoxesPerContainer: Int = 1 << 17, maxPayloadRead: Int = 64 << 20) {
        self.maxDepth = maxDepth
        self.maxBoxesPerContainer = maxBoxesPerContainer
        self.maxPayloadRead = maxPayloadRead
    }
}

/// Reads ISOBMFF box headers from a source without reading payloads: a container is listed by hopping from
/// header to header, so a multi-gigabyte `mdat` costs one 16-byte read. Every size is checked against its
/// container and the file; errors name the box path and the byte offset.
public struct BoxReader {
    /// The boxes found in a container, and the bytes after the last one that do not form a box.
    public struct Listing: Sendable {
        public var boxes: [Box]
        /// At top level: bytes after the last box (a trailer). Inside a box: fewer than 8 bytes of padding.
        public var leftover: Range<Int64>?
    }

    public let source: any ByteSource
    /// Names the format in errors ("HEIF", "MP4").
    public let format: String
    public let limits: BoxLimits

    public init(_ source: any ByteSource, format: String, limits: BoxLimits = BoxLimits()) {
        self.source = source
        self.format = format
        self.limits = limits
    }

    /// The top-level boxes of the file. Bytes after the last box that cannot start a box (too short, or an
    /// unprintable type) are returned as `leftover`; a box announcing more bytes than the file has is truncation.
    public func topLevel() throws -> Listing {
        try boxes(in: 0..<source.size, parentPath: "", depth: 0)
    }

    /// The children of `box`, whose payload starts with `skip` bytes of its own fields (4 for a full box's
    /// version and flags, 8 for `meta` in some QuickTime files is not handled here: pass what the format says).
    /// `anyType`: child types may be any 32-bit value (QuickTime `ilst` entries are numbered by their key index).
    public func children(of box: Box, skip: Int = 0, depth: Int, anyType: Bool = false) throws -> Listing {
        guard depth <= limits.maxDepth else {
            throw MetascrubError.limitExceeded(format: format, path: box.path, offset: box.offset, limit: "\(limits.maxDepth) levels of nesting")
        }
        guard Int64(skip) <= box.payloadSize else {
            throw MetascrubError.malformed(format: format, path: box.path, offset: box.offset, reason: "box too small for its fields")
        }
        return try boxes(in: (box.payloadOffset + Int64(skip))..<box.end, parentPath: box.path, depth: depth, anyType: anyType)
    }

    /// Lists the boxes tiling `range`. `depth` 0 is the top level of the file.
    public func boxes(in range: Range<Int64>, parentPath: String, depth: Int, anyType: Bool = false) throws -> Listing {
        var boxes: [Box] = []
        var at = range.lowerBound
        while at < range.upperBound {
            let left = range.upperBound - at
            guard left >= 8 else { return Listing(boxes: boxes, leftover: at..<range.upperBound) }
            guard boxes.count < limits.maxBoxesPerContainer else {
                throw MetascrubError.limitExceeded(format: format, path: parentPath.isEmpty ? "top level" : parentPath, offset: at,
                                                   limit: "\(limits.maxBoxesPerContainer) boxes in one container")
            }
            guard let box = try header(at: at, containerEnd: range.upperBound, parentPath: parentPath, topLevel: depth == 0, anyType: anyType) else {
                return Listing(boxes: boxes, leftover: at..<range.upperBound)
            }
            boxes.append(box)
            at = box.end
        }
        return Listing(boxes: boxes, leftover: nil)
    }

    /// The header at `offset`, or nil when the bytes there cannot be a box (top level: the rest is a trailer).
    func header(at offset: Int64, containerEnd: Int64, parentPath: String, topLevel: Bool, anyType: Bool = false) throws -> Box? {
        let head = try source.read(at: offset, count: 8, format: format, path: parentPath.isEmpty ? "box header" : "\(parentPath) child header")
        let size32 = Int64(BigEndian.u32(head, 0))
        let type = FourCC(bytes: head[4..<8])
        let path = parentPath.isEmpty ? type.description : "\(parentPath)/\(type)"
        func malformed(_ reason: String) -> MetascrubError {
            .malformed(format: format, path: path, offset: offset, reason: reason)
        }
        guard type.isPrintable || (anyType && size32 >= 8) else {
            if topLevel || containerEnd - offset < 8 { return nil }
            throw malformed("box type is not a four-character code")
        }
        // Inside a box, a zero 32-bit word followed by padding is a QuickTime-style terminator.
        if !topLevel, size32 == 0, type.value == 0 { return nil }
        var headerSize = 8
        var size: Int64
        var form = Box.SizeForm.compact
        switch size32 {
        case 0:
            size = containerEnd - offset
            form = .toEnd
        case 1:
            let large = try source.read(at: offset + 8, count: 8, format: format, path: "\(path) largesize")
            let value = large.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            guard value <= UInt64(Int64.max) else { throw malformed("64-bit size out of range") }
            size = Int64(value)
            headerSize = 16
            form = .large
            guard size >= 16 else { throw malformed("64-bit size \(size) is smaller than the header") }
        case 2..<8:
            if topLevel { return nil }
            throw malformed("size \(size32) is smaller than a box header")
        default:
            size = size32
        }
        var extendedType: [UInt8]?
        if type == "uuid" {
            guard size >= Int64(headerSize + 16) else { throw malformed("uuid box too small for its extended type") }
            extendedType = try source.read(at: offset + Int64(headerSize), count: 16, format: format, path: "\(path) extended type")
            headerSize += 16
        }
        guard size <= containerEnd - offset else {
            if offset + size > source.size {
                throw MetascrubError.truncated(format: format, path: path, offset: offset, needed: offset + size - source.size)
            }
            throw malformed("box of \(size) bytes runs past the end of its container at \(containerEnd)")
        }
        return Box(type: type, offset: offset, size: size, headerSize: headerSize, sizeForm: form, extendedType: extendedType, path: path)
    }

    /// The whole payload of a (small) box, refused above `limits.maxPayloadRead`.
    public func payload(of box: Box) throws -> [UInt8] {
        guard box.payloadSize <= Int64(limits.maxPayloadRead) else {
            throw MetascrubError.limitExceeded(format: format, path: box.path, offset: box.offset, limit: "\(limits.maxPayloadRead) bytes read into memory")
        }
        return try source.read(at: box.payloadOffset, count: Int(box.payloadSize), format: format, path: box.path)
    }

    /// Every byte of the box, header included (for copying small boxes into a rebuilt parent).
    public func bytes(of box: Box) throws -> [UInt8] {
        guard box.size <= Int64(limits.maxPayloadRead) else {
            throw MetascrubError.limitExceeded(format: format, path: box.path, offset: box.offset, limit: "\(limits.maxPayloadRead) bytes read into memory")
        }
        return try source.read(at: box.offset, count: Int(box.size), format: format, path: box.path)
    }

    /// Version and flags of a full box.
    public func fullBoxHeader(of box: Box) throws -> (version: UInt8, flags: UInt32) {
        guard box.payloadSize >= 4 else {
            throw MetascrubError.malformed(format: format, path: box.path, offset: box.offset, reason: "full box without version and flags")
        }
        let b = try source.read(at: box.payloadOffset, count: 4, format: format, path: box.path)
        return (b[0], UInt32(b[1]) << 16 | UInt32(b[2]) << 8 | UInt32(b[3]))
    }
}
