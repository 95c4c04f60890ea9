// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// The IFDs of an EXIF block (TIFF structure): the directories metascrub itemises and rebuilds.
public enum ExifDirectory: String, Sendable, CaseIterable {
    case ifd0 = "IFD0", exif = "ExifIFD", gps = "GPS", interop = "Interop", ifd1 = "IFD1"
}

/// One directory entry, with its value bytes exactly as stored (in the block's byte order).
public struct ExifEntry: Sendable, Equatable {
    public var tag: UInt16
    public var type: UInt16
    public var count: UInt32
    public var value: [UInt8]
    /// Where the value was in the block (for maker notes, whose internal offsets may depend on it).
    public var valueOffset: Int

    public init(tag: UInt16, type: UInt16, count: UInt32, value: [UInt8], valueOffset: Int = 0) {
        self.tag = tag
        self.type = type
        self.count = count
        self.value = value
        self.valueOffset = valueOffset
    }

    public static func typeSize(_ type: UInt16) -> Int? {
        switch type {
        case 1, 2, 6, 7: 1
        case 3, 8: 2
        case 4, 9, 11, 13: 4
        case 5, 10, 12: 8
        default: nil
        }
    }
}

/// A parsed EXIF block. Pointer tags (Exif, GPS, Interop IFD offsets; thumbnail offset/length) are structure:
/// they are not entries here and the writer recreates them.
public struct ExifBlock: Sendable {
    public static let exifPointer: UInt16 = 0x8769
    public static let gpsPointer: UInt16 = 0x8825
    public static let interopPointer: UInt16 = 0xA005
    public static let thumbnailOffset: UInt16 = 0x0201
    public static let thumbnailLength: UInt16 = 0x0202
    public static let orientation: UInt16 = 0x0112
    public static let makerNote: UInt16 = 0x927C

    public var order: ByteOrder
    public var directories: [ExifDirectory: [ExifEntry]] = [:]
    /// The IFD1 thumbnail's bytes (a JPEG), when there is one.
    public var thumbnail: [UInt8]?
    public var thumbnailOffset: Int?
    /// Problems met while parsing that did not stop it.
    public var notes: [Note] = []
    /// Size of the block as found.
    public var size: Int
    /// What the parse read: the header, IFD tables, entry values and the thumbnail. Anything else in the block
    /// no reader reads (`ExifItems.unreferenced`).
    public var referenced: [Range<Int>] = [0..<8]

    public func entries(_ directory: ExifDirectory) -> [ExifEntry] { directories[directory] ?? [] }

    public var orientationValue: Int? {
        guard let entry = entries(.ifd0).first(where: { $0.tag == Self.orientation }), entry.type == 3, entry.count >= 1,
              entry.value.count >= 2 else { return nil }
        return Int(order.u16(entry.value, 0))
    }
}

/// Reads EXIF/TIFF blocks with every offset checked against the block and loops refused.
public enum ExifParser {
    static let maxEntriesPerIFD = 1024

    /// `origin` is the file offset of the block (for error messages); `path` names its container.
    public static func parse(_ b: [UInt8], origin: Int64, path: String) throws -> ExifBlock {
        func malformed(_ at: Int, _ reason: String) -> MetascrubError {
            .malformed(format: "EXIF", path: path, offset: origin + Int64(at), reason: reason)
        }
        guard b.count >= 8 else { throw malformed(0, "shorter than a TIFF header") }
        let order: ByteOrder
        switch (b[0], b[1]) {
        case (0x49, 0x49): order = .little
        case (0x4D, 0x4D): order = .big
        default: throw malformed(0, "no TIFF byte-order mark")
        }
        guard order.u16(b, 2) == 42 else { throw malformed(2, "not a TIFF header (magic is not 42)") }
        var block = ExifBlock(order: order, size: b.count)
        var visited = Set<Int>()

        /// Reads one IFD; returns its entries (pointer tags included) and the next-IFD offset.
        func readIFD(_ offset: Int, _ name: ExifDirectory) throws -> (entries: [ExifEntry], next: Int) {
            guard offset >= 8, offset + 2 <= b.count else { throw malformed(offset, "\(name.rawValue) offset outside the block") }
            guard visited.insert(offset).inserted else { throw malformed(offset, "\(name.rawValue) offset loops back") }
            let count = Int(order.u16(b, offset))
            guard count <= maxEntriesPerIFD else { throw malformed(offset, "\(name.rawValue) claims \(count) entries") }
            guard offset + 2 + count * 12 <= b.count else { throw malformed(offset, "\(name.rawValue) entries run past the block") }
            block.referenced.append(offset..<min(b.count, offset + 2 + count * 12 + 4))
            var entries: [ExifEntry] = []
            entries.reserveCapacity(count)
            for i in 0..<count {
                let e = offset + 2 + i * 12
                let tag = order.u16(b, e)
                let type = order.u16(b, e + 2)
                let n = order.u32(b, e + 4)
                guard let unit = ExifEntry.typeSize(type) else {
                    block.notes.append(Note(.warning, code: "exif-bad-type",
                                            "\(name.rawValue) entry 0x\(String(tag, radix: 16)) has unknown type \(type); dropped",
                                            offset: origin + Int64(e)))
                    continue
                }
                let total = Int(n) * unit
                guard Int(n) <= b.count, total <= b.count else {
                    throw malformed(e, "\(name.rawValue) entry 0x\(String(tag, radix: 16)) is larger than the block")
                }
                let at = total <= 4 ? e + 8 : Int(order.u32(b, e + 8))
                guard at >= 0, at + total <= b.count else {
                    throw malformed(e, "\(name.rawValue) entry 0x\(String(tag, radix: 16)) points outside the block")
                }
                entries.append(ExifEntry(tag: tag, type: type, count: n, value: Array(b[at..<at + total]), valueOffset: at))
                block.referenced.append(at..<at + total)
            }
            let nextAt = offset + 2 + count * 12
            let next = nextAt + 4 <= b.count ? Int(order.u32(b, nextAt)) : 0
            return (entries, next)
        }

        func pointer(_ entries: [ExifEntry], _ tag: UInt16) -> Int? {
            guard let e = entries.first(where: { $0.tag == tag }), e.value.count >= 4 else { return nil }
            return Int(order.u32(e.value, 0))
        }

        let ifd0 = try readIFD(Int(order.u32(b, 4)), .ifd0)
        block.directories[.ifd0] = ifd0.entries.filter { $0.tag != ExifBlock.exifPointer && $0.tag != ExifBlock.gpsPointer }
        // A broken sub-directory loses only itself, noted; the rest of the block still itemises.
        func sub(_ at: Int?, _ name: ExifDirectory) -> [ExifEntry]? {
            guard let at else { return nil }
            do { return try readIFD(at, name).entries } catch let error as MetascrubError {
                block.notes.append(Note(.warning, code: "exif-bad-ifd", error.description, offset: error.offset))
                block.directories[name] = []
                return nil
            } catch { return nil }
        }
        var gpsAt = pointer(ifd0.entries, ExifBlock.gpsPointer)
        if let exif = sub(pointer(ifd0.entries, ExifBlock.exifPointer), .exif) {
            // Some writers link the GPS IFD from the Exif IFD instead of IFD0; readers (ExifTool) follow it there,
            // so it is read, and a rebuild links it from IFD0 where it belongs.
            gpsAt = gpsAt ?? pointer(exif, ExifBlock.gpsPointer)
            block.directories[.exif] = exif.filter { $0.tag != ExifBlock.interopPointer && $0.tag != ExifBlock.gpsPointer }
            if let interop = sub(pointer(exif, ExifBlock.interopPointer), .interop) { block.directories[.interop] = interop }
        }
        if let gps = sub(gpsAt, .gps) { block.directories[.gps] = gps }
        if ifd0.next != 0, let ifd1 = sub(ifd0.next, .ifd1) {
            block.directories[.ifd1] = ifd1.filter { $0.tag != ExifBlock.thumbnailOffset && $0.tag != ExifBlock.thumbnailLength }
            if let start = pointer(ifd1, ExifBlock.thumbnailOffset), let length = pointer(ifd1, ExifBlock.thumbnailLength) {
                if start > 0, length > 0, start + length <= b.count {
                    block.thumbnail = Array(b[start..<start + length])
                    block.referenced.append(start..<start + length)
                    block.thumbnailOffset = start
                } else {
                    block.notes.append(Note(.warning, code: "exif-bad-thumbnail", "IFD1 thumbnail points outside the EXIF block",
                                            offset: origin))
                }
            }
        }
        return block
    }
}
