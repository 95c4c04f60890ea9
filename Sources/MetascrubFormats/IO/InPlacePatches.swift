// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubNative

/// Same-size replacements of byte ranges. Containers whose indexes hold byte positions (Matroska SeekHead and
/// Cues, AVI idx1, ASF indexes, MPEG-TS packets) are cleaned by overwriting metadata with padding of the same
/// size, so no offset moves, no index needs rewriting, and everything else is copied unchanged in bulk.
struct InPlacePatches {
    struct Patch {
        var offset: Int64
        var bytes: [UInt8]
        var range: Range<Int64> { offset..<offset + Int64(bytes.count) }
    }

    private(set) var patches: [Patch] = []

    var isEmpty: Bool { patches.isEmpty }
    var ranges: [Range<Int64>] { patches.map(\.range) }

    mutating func add(_ offset: Int64, _ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        patches.append(Patch(offset: offset, bytes: bytes))
    }

    /// Puts `bytes` over `range`, taking the place of what earlier patches wrote there (the bytes already hold it,
    /// from `patched`): patches inside the range go, patches across its edges keep their outside parts.
    mutating func replace(_ range: Range<Int64>, with bytes: [UInt8]) {
        var kept: [Patch] = []
        for p in patches {
            guard p.range.overlaps(range) else { kept.append(p); continue }
            if p.offset < range.lowerBound { kept.append(Patch(offset: p.offset, bytes: Array(p.bytes[..<Int(range.lowerBound - p.offset)]))) }
            if p.range.upperBound > range.upperBound {
                kept.append(Patch(offset: range.upperBound, bytes: Array(p.bytes[Int(range.upperBound - p.offset)...])))
            }
        }
        patches = kept
        add(range.lowerBound, bytes)
    }

    /// Zero-fills a range (in pieces of at most 1 MiB, so a large block does not allocate its whole size at once).
    mutating func zero(_ range: Range<Int64>) {
        var at = range.lowerBound
        while at < range.upperBound {
            let n = min(range.upperBound - at, 1 << 20)
            add(at, [UInt8](repeating: 0, count: Int(n)))
            at += n
        }
    }

    /// Whether a range is already overwritten entirely by one patch or several adjacent ones.
    func covers(_ range: Range<Int64>) -> Bool {
        var at = range.lowerBound
        for p in patches.sorted(by: { $0.offset < $1.offset }) where p.range.upperBound > at {
            if p.offset > at { return false }
            at = p.range.upperBound
            if at >= range.upperBound { return true }
        }
        return at >= range.upperBound
    }

    /// The output: the source with every patch applied. Patches must not overlap and must lie inside the file.
    /// In the ledger, a patch of zeros is padding and any other is structure we wrote (a Void or JUNK header); what
    /// lies between patches is the structure the scan walked and coded data, at the same offsets, which the
    /// content check compares range by range (`SameOffset.verify`).
    func plan(size: Int64, format: String) throws -> OutputPlan {
        var plan = OutputPlan()
        var at: Int64 = 0
        for p in patches.sorted(by: { $0.offset < $1.offset }) {
            guard p.offset >= at, p.range.upperBound <= size else {
                throw MetascrubError.malformed(format: format, path: "cleaning plan", offset: p.offset, reason: "overlapping replacements")
            }
            plan.copy(offset: at, count: p.offset - at, because: .structure)
            plan.append(p.bytes, because: p.bytes.allSatisfy { $0 == 0 } ? .padding : .structure)
            at = p.range.upperBound
        }
        plan.copy(offset: at, count: size - at, because: .structure)
        return plan
    }

    /// Bytes of `range` as they will be written (small ranges: element bodies that need a checksum).
    func patched(_ source: any ByteSource, _ range: Range<Int64>) throws -> [UInt8] {
        var bytes = try source.read(at: range.lowerBound, count: Int(range.count))
        for p in patches where p.range.overlaps(range) {
            let lo = max(p.offset, range.lowerBound), hi = min(p.range.upperBound, range.upperBound)
            for i in lo..<hi { bytes[Int(i - range.lowerBound)] = p.bytes[Int(i - p.offset)] }
        }
        return bytes
    }

    /// CRC-32 (IEEE 802.3, reflected) of `range` with the patches applied, read in bounded blocks.
    func crc32(_ source: any ByteSource, _ range: Range<Int64>) throws -> UInt32 {
        // zlib's CRC-32 (a Cluster holds megabytes of video; the table loop below took a minute per gigabyte).
        var crc: UInt32 = 0
        var at = range.lowerBound
        while at < range.upperBound {
            let n = min(range.upperBound - at, 1 << 20)
            crc = Zlib.crc32(try patched(source, at..<at + n), continuing: crc)
            at += n
        }
        return crc
    }
}

enum CRC32 {
    /// MPEG-2 CRC-32 (polynomial 0x04C11DB7, not reflected, no final xor) of PSI sections.
    static func mpeg(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for b in bytes {
            crc ^= UInt32(b) << 24
            for _ in 0..<8 { crc = crc & 0x8000_0000 != 0 ? (crc << 1) ^ 0x04C1_1DB7 : crc << 1 }
        }
        return crc
    }
}

/// Describes values for `--show-values` only: printable text, cut to a readable length.
enum ValueText {
    static func render(_ bytes: ArraySlice<UInt8>, limit: Int = 200) -> String {
        var s = String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        if s.count > limit { s = String(s.prefix(limit)) + "…" }
        return s
    }

    static func utf16le(_ bytes: ArraySlice<UInt8>) -> String {
        var units: [UInt16] = []
        var i = bytes.startIndex
        while i + 1 < bytes.endIndex {
            let u = UInt16(bytes[i]) | UInt16(bytes[i + 1]) << 8
            if u == 0 { break }
            units.append(u)
            i += 2
        }
        return String(decoding: units, as: UTF16.self)
    }
}
