// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// The hard binding of an ISOBMFF file (HEIF, AVIF, MP4, JPEG XL's box form): `c2pa.hash.bmff` (C2PA 2.x,
/// "BMFF-based hash"). Boxes are excluded by path (`/uuid` holding the manifest, `/ftyp`, `/free`, …), optionally
/// only those whose length, version, flags or bytes at given offsets match, and optionally only subsets of them;
/// the rest of the file is hashed. From `.v2` on, each top-level box that is not wholly excluded is preceded in
/// the hash by its offset as a big-endian 64-bit integer, so moving a box breaks the binding as changing it does.
struct C2PABMFFHash: Sendable {
    struct Exclusion: Sendable {
        /// Box types from the top level down (`/moov/trak` → ["moov", "trak"]).
        var path: [String]
        var length: Int64?
        var data: [(offset: Int64, value: [UInt8])]
        /// Byte ranges relative to the box to exclude instead of the whole box (length 0: to the box's end).
        var subsets: [(offset: Int64, length: Int64)]
        var version: UInt8?
        var flags: UInt32?
        /// Flags must equal (true) or only stay within (false) the given bits.
        var exact: Bool
    }

    var exclusions: [Exclusion]
    var alg: String
    var hash: [UInt8]
    var hashesOffsets: Bool

    /// Reads the assertion's CBOR; a Merkle tree (fragmented media) or a remote hash is not checked.
    static func parse(
        _ value: CBOR, label: String, claimAlg: String?
    ) -> Result<C2PABMFFHash, C2PAStore.BindingProblem> {
        guard let hash = value["hash"]?.bytes else { return .failure(.unchecked("its \(label) has no hash")) }
        if value["merkle"] != nil {
            return .failure(.unchecked("its \(label) uses Merkle trees, which are not checked"))
        }
        if value["url"] != nil { return .failure(.unchecked("its \(label) hashes a remote asset")) }
        var exclusions: [Exclusion] = []
        for entry in value["exclusions"]?.array ?? [] {
            guard let xpath = entry["xpath"]?.text, xpath.hasPrefix("/") else {
                return .failure(.unchecked("its \(label) has an exclusion without a box path"))
            }
            let path = xpath.split(separator: "/").map(String.init)
            guard !path.isEmpty, path.allSatisfy({ $0.utf8.count == 4 }) else {
                return .failure(.unchecked("its \(label) excludes \(xpath), a path metascrub does not resolve"))
            }
            var exclusion = Exclusion(path: path, length: entry["length"]?.integer, data: [], subsets: [],
                                      version: entry["version"]?.integer.flatMap { UInt8(exactly: $0) },
                                      flags: nil, exact: entry["exact"]?.isFalse != true)
            if let flags = entry["flags"]?.bytes {
                exclusion.flags = flags.count >= 3 ? flags.prefix(3).reduce(UInt32(0)) { $0 << 8 | UInt32($1) } : 0
            }
            for match in entry["data"]?.array ?? [] {
                guard let offset = match["offset"]?.integer, offset >= 0, let bytes = match["value"]?.bytes else {
                    return .failure(.unchecked("its \(label) has a data match out of range"))
                }
                exclusion.data.append((offset, bytes))
            }
            for subset in entry["subset"]?.array ?? [] {
                guard let offset = subset["offset"]?.integer, let length = subset["length"]?.integer,
                      offset >= 0, length >= 0 else {
                    return .failure(.unchecked("its \(label) has a subset out of range"))
                }
                exclusion.subsets.append((offset, length))
            }
            exclusions.append(exclusion)
        }
        // `c2pa.hash.bmff` is version 1; `.v2`, `.v3` and later hash box offsets.
        let version = label.split(separator: ".").last.flatMap { $0.hasPrefix("v") ? Int($0.dropFirst()) : nil } ?? 1
        return .success(C2PABMFFHash(exclusions: exclusions, alg: value["alg"]?.text ?? claimAlg ?? "sha256",
                                     hash: hash, hashesOffsets: version >= 2))
    }

    /// Whether `source` hashes to the signed digest; nil for an algorithm other than SHA-256 or a box tree the
    /// exclusion paths cannot be resolved in.
    func matches(_ source: any ByteSource) throws -> Bool? {
        guard alg == "sha256" else { return nil }
        let reader = BoxReader(source, format: "C2PA BMFF hash")
        guard let top = try? reader.topLevel() else { return nil }
        var offsets = Set(top.boxes.map(\.offset))
        var excluded: [Range<Int64>] = []
        for exclusion in exclusions {
            guard let boxes = try? resolve(exclusion.path, in: top.boxes, reader: reader) else { return nil }
            for box in boxes where try selects(box, exclusion, reader) {
                guard !exclusion.subsets.isEmpty else {
                    excluded.append(box.range)
                    offsets.remove(box.offset)
                    continue
                }
                for subset in exclusion.subsets where subset.offset <= box.size {
                    let left = box.size - subset.offset
                    let length = subset.length == 0 ? left : min(subset.length, left)
                    excluded.append(box.offset + subset.offset..<box.offset + subset.offset + length)
                }
            }
        }
        var digest = SHA256()
        for part in Self.parts(size: source.size, excluded: excluded, markers: hashesOffsets ? offsets.sorted() : []) {
            switch part {
            case .offset(let at): digest.update(withUnsafeBytes(of: UInt64(at).bigEndian) { Array($0) })
            case .bytes(let range): try digest.feed(range, from: source)
            }
        }
        return digest.finalize() == hash
    }

    enum Part: Equatable { case bytes(Range<Int64>), offset(Int64) }

    /// What is hashed, in order: the bytes outside the exclusions, split at each marked top-level box start
    /// with the offset inserted there. A marker outside every included range (a box whose start a subset
    /// excludes) still counts when it lies between the first and last included bytes, as the reference
    /// implementation does.
    static func parts(size: Int64, excluded: [Range<Int64>], markers: [Int64]) -> [Part] {
        var included: [Range<Int64>] = []
        var at: Int64 = 0
        for range in excluded.filter({ !$0.isEmpty }).sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if range.lowerBound > at { included.append(at..<min(range.lowerBound, size)) }
            at = max(at, range.upperBound)
        }
        if at < size { included.append(at..<size) }
        var parts: [(start: Int64, part: Part)] = []
        for range in included {
            var current = range
            for marker in markers where current.contains(marker) {
                if marker > current.lowerBound {
                    parts.append((current.lowerBound, .bytes(current.lowerBound..<marker)))
                    current = marker..<current.upperBound
                }
                parts.append((marker, .offset(marker)))
            }
            parts.append((current.lowerBound, .bytes(current)))
        }
        if let first = included.first, let last = included.last {
            for marker in markers where !included.contains(where: { $0.contains(marker) })
                && marker > first.lowerBound && marker < last.upperBound - 1 {
                parts.append((marker, .offset(marker)))
            }
        }
        // Stable: at one start, the offset comes before the bytes it precedes.
        return parts.enumerated().sorted { ($0.element.start, $0.offset) < ($1.element.start, $1.offset) }
            .map(\.element.part)
    }

    /// The boxes at a path: top-level boxes of the first type, then their children of the next, and so on
    /// (`meta` is a full box: its children follow its version and flags).
    private func resolve(_ path: [String], in top: [Box], reader: BoxReader) throws -> [Box] {
        var level = top.filter { $0.type.description == path[0] }
        for (depth, type) in path.dropFirst().enumerated() {
            level = try level.flatMap { parent in
                try reader.children(of: parent, skip: parent.type == "meta" ? 4 : 0, depth: depth + 1).boxes
            }.filter { $0.type.description == type }
        }
        return level
    }

    /// Whether a box at the exclusion's path is the one it means: length, version, flags and bytes as given.
    private func selects(_ box: Box, _ exclusion: Exclusion, _ reader: BoxReader) throws -> Bool {
        if let length = exclusion.length, length != box.size { return false }
        if exclusion.version != nil || exclusion.flags != nil {
            guard let header = try? reader.fullBoxHeader(of: box) else { return false }
            if let version = exclusion.version, version != header.version { return false }
            if let flags = exclusion.flags {
                if exclusion.exact ? flags != header.flags : flags | header.flags != flags { return false }
            }
        }
        for match in exclusion.data {
            guard match.offset <= box.size - Int64(match.value.count) else { return false }
            guard try reader.source.read(at: box.offset + match.offset, count: match.value.count) == match.value else {
                return false
            }
        }
        return true
    }
}

extension SHA256 {
    /// Hashes a range of a source a megabyte at a time.
    mutating func feed(_ range: Range<Int64>, from source: any ByteSource) throws {
        var next = range.lowerBound
        while next < range.upperBound {
            let count = Int(min(range.upperBound - next, 1 << 20))
            update(try source.read(at: next, count: count))
            next += Int64(count)
        }
    }
}
