// SPDX-License-Identifier: GPL-3.0-or-later

/// Builds a compact EXIF block holding only the kept entries, in the original byte order.
///
/// Maker notes of several makers use offsets relative to the TIFF header, so a kept maker note is written
/// at its original offset when the new layout has not passed it yet (padding with zeros); the writer reports
/// whether it managed.
public struct ExifWriter {
    public struct Output {
        public var bytes: [UInt8]
        /// false when a kept maker note had to move (its internal offsets may no longer resolve).
        public var makerNoteInPlace: Bool
    }

    public var order: ByteOrder
    public var directories: [ExifDirectory: [ExifEntry]]
    public var thumbnail: [UInt8]?

    public init(order: ByteOrder, directories: [ExifDirectory: [ExifEntry]], thumbnail: [UInt8]?) {
        self.order = order
        self.directories = directories
        self.thumbnail = thumbnail
    }

    private var isEmpty: Bool {
        directories.values.allSatisfy(\.isEmpty) && thumbnail == nil
    }

    /// nil when nothing is left to write.
    public func build() -> Output? {
        guard !isEmpty else { return nil }
        var out: [UInt8] = (order.bigEndian ? [0x4D, 0x4D] : [0x49, 0x49]) + order.bytes(UInt16(42)) + order.bytes(UInt32(8))
        var makerNoteInPlace = true

        func align() { if out.count % 2 == 1 { out.append(0) } }
        func patch32(_ at: Int, _ v: Int) {
            let bytes = order.bytes(UInt32(v))
            out.replaceSubrange(at..<at + 4, with: bytes)
        }

        /// Writes an IFD; pointer entries are written as placeholders whose positions are returned.
        func emit(_ entries: [ExifEntry], pointers: [UInt16]) -> (start: Int, pointerAt: [UInt16: Int], nextAt: Int) {
            align()
            var all = entries.map { ($0, false) } + pointers.map { (ExifEntry(tag: $0, type: 4, count: 1, value: [0, 0, 0, 0], valueOffset: 0), true) }
            all.sort { $0.0.tag < $1.0.tag }
            let start = out.count
            out += order.bytes(UInt16(all.count))
            var pointerAt: [UInt16: Int] = [:]
            var deferred: [(entryAt: Int, entry: ExifEntry)] = []
            for (entry, isPointer) in all {
                let at = out.count
                out += order.bytes(entry.tag) + order.bytes(entry.type) + order.bytes(entry.count)
                if isPointer {
                    pointerAt[entry.tag] = at + 8
                    out += [0, 0, 0, 0]
                } else if entry.value.count <= 4 {
                    out += entry.value + [UInt8](repeating: 0, count: 4 - entry.value.count)
                } else {
                    out += [0, 0, 0, 0]
                    deferred.append((at, entry))
                }
            }
            let nextAt = out.count
            out += [0, 0, 0, 0]
            for (entryAt, entry) in deferred {
                align()
                if entry.tag == ExifBlock.makerNote {
                    if entry.valueOffset >= out.count {
                        out += [UInt8](repeating: 0, count: entry.valueOffset - out.count)
                    } else {
                        makerNoteInPlace = false
                    }
                }
                patch32(entryAt + 8, out.count)
                out += entry.value
            }
            return (start, pointerAt, nextAt)
        }

        let exif = directories[.exif] ?? []
        let gps = directories[.gps] ?? []
        let interop = directories[.interop] ?? []
        let hasExif = !exif.isEmpty || !interop.isEmpty
        let ifd0 = emit(directories[.ifd0] ?? [], pointers: (hasExif ? [ExifBlock.exifPointer] : []) + (gps.isEmpty ? [] : [ExifBlock.gpsPointer]))
        if hasExif {
            let e = emit(exif, pointers: interop.isEmpty ? [] : [ExifBlock.interopPointer])
            patch32(ifd0.pointerAt[ExifBlock.exifPointer]!, e.start)
            if !interop.isEmpty {
                let i = emit(interop, pointers: [])
                patch32(e.pointerAt[ExifBlock.interopPointer]!, i.start)
            }
        }
        if !gps.isEmpty {
            let g = emit(gps, pointers: [])
            patch32(ifd0.pointerAt[ExifBlock.gpsPointer]!, g.start)
        }
        if let thumbnail {
            let ifd1 = emit(directories[.ifd1] ?? [], pointers: [ExifBlock.thumbnailOffset, ExifBlock.thumbnailLength])
            patch32(ifd0.nextAt, ifd1.start)
            align()
            patch32(ifd1.pointerAt[ExifBlock.thumbnailOffset]!, out.count)
            patch32(ifd1.pointerAt[ExifBlock.thumbnailLength]!, thumbnail.count)
            out += thumbnail
        }
        return Output(bytes: out, makerNoteInPlace: makerNoteInPlace)
    }
}
