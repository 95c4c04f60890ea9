// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// The text tags of an ICC profile (ICC.1:2010 and v2): descriptions and copyright that name an owner, a
/// calibrating user or a device serial, though no colour conversion reads them. They are blanked where they lie, at
/// the same length, so no tag offset moves and the rendering tags stay byte for byte.
struct ICCTextTags: Sendable {
    struct Tag: Sendable {
        /// `desc`, `cprt`, `dmnd`, `dmdd`, `vued`.
        let signature: String
        let text: String
        /// Byte ranges of the tag's characters inside the profile (ASCII, UTF-16BE, or both and a Mac script
        /// string for `desc`).
        let characters: [Range<Int>]
    }

    static let headerSize = 128
    /// Header bytes of the profile ID, an MD5 over the profile; all zero means "not computed" (ICC.1:2010 7.2.18).
    static let profileID = 84..<100
    static let categories: [String: Category] = [
        "desc": .identity, "cprt": .identity, "vued": .identity, "dmnd": .device, "dmdd": .device,
    ]

    let tags: [Tag]

    /// Reads the tag table; only tags with some text in them are listed.
    init(_ profile: [UInt8], path: String) throws {
        func malformed(_ at: Int, _ reason: String) -> MetascrubError {
            .malformed(format: "ICC", path: path, offset: Int64(at), reason: reason)
        }
        guard profile.count >= Self.headerSize + 4 else {
            throw MetascrubError.truncated(format: "ICC", path: path, offset: 0, needed: Int64(Self.headerSize + 4))
        }
        let count = BigEndian.u32(profile, Self.headerSize)
        guard count <= (profile.count - Self.headerSize - 4) / 12 else {
            throw malformed(Self.headerSize, "tag count \(count)")
        }
        var tags: [Tag] = []
        var seen = Set<Int>()
        for n in 0..<count {
            let entry = Self.headerSize + 4 + 12 * n
            let signature = String(decoding: profile[entry..<entry + 4], as: UTF8.self)
            guard Self.categories[signature] != nil else { continue }
            let offset = BigEndian.u32(profile, entry + 4), size = BigEndian.u32(profile, entry + 8)
            guard offset >= Self.headerSize, size >= 8, offset <= profile.count, size <= profile.count - offset else {
                throw malformed(entry, "tag \(signature) at \(offset)+\(size) outside the profile")
            }
            // Tags may share one element; it is read (and blanked) once.
            guard seen.insert(offset).inserted else { continue }
            let element = offset..<(offset + size)
            let runs = try Self.characters(profile, element, signature: signature, malformed)
            let text = Self.text(profile, runs)
            if !text.isEmpty { tags.append(Tag(signature: signature, text: text, characters: runs.map(\.range))) }
        }
        self.tags = tags
    }

    /// The profile with every listed tag's characters zeroed and the profile ID cleared.
    func blanked(_ profile: [UInt8], signatures: Set<String>) -> [UInt8] {
        var out = profile
        for tag in tags where signatures.contains(tag.signature) {
            for range in tag.characters { for i in range { out[i] = 0 } }
        }
        for i in Self.profileID { out[i] = 0 }
        return out
    }

    /// A run of characters: where it lies and whether it is UTF-16BE.
    private struct Run { let range: Range<Int>; let utf16: Bool }

    /// The character runs of one tag element by its type.
    private static func characters(
        _ p: [UInt8], _ element: Range<Int>, signature: String, _ malformed: (Int, String) -> MetascrubError
    ) throws -> [Run] {
        let start = element.lowerBound, end = element.upperBound
        let type = String(decoding: p[start..<start + 4], as: UTF8.self)
        switch type {
        case "text":
            return [Run(range: (start + 8)..<end, utf16: false)]
        case "desc":
            // textDescriptionType: ASCII count and characters, Unicode language code, count and UTF-16BE
            // characters, ScriptCode code, count and 67 bytes.
            guard end - start >= 12 else { throw malformed(start, "\(signature) desc element too short") }
            let asciiCount = BigEndian.u32(p, start + 8)
            guard asciiCount <= end - start - 12 else {
                throw malformed(start + 8, "\(signature) ASCII count \(asciiCount)")
            }
            var runs = [Run(range: (start + 12)..<(start + 12 + asciiCount), utf16: false)]
            let unicode = start + 12 + asciiCount
            guard unicode + 8 <= end else { return runs }
            let units = BigEndian.u32(p, unicode + 4)
            guard units <= (end - unicode - 8) / 2 else { return runs }
            runs.append(Run(range: (unicode + 8)..<(unicode + 8 + 2 * units), utf16: true))
            // The ScriptCode string: a 2-byte code, a count, then 67 bytes of which `count` are characters.
            let script = unicode + 8 + 2 * units
            if script + 3 + 67 <= end {
                runs.append(Run(range: (script + 3)..<(script + 3 + min(Int(p[script + 2]), 67)), utf16: false))
            }
            return runs
        case "mluc":
            guard end - start >= 16 else { throw malformed(start, "\(signature) mluc element too short") }
            let records = BigEndian.u32(p, start + 8), recordSize = BigEndian.u32(p, start + 12)
            guard recordSize >= 12, records <= (end - start - 16) / recordSize else {
                throw malformed(start + 8, "\(signature) mluc with \(records) records of \(recordSize) bytes")
            }
            return try (0..<records).map { r in
                let record = start + 16 + r * recordSize
                let length = BigEndian.u32(p, record + 4), offset = BigEndian.u32(p, record + 8)
                guard offset <= end - start, length <= end - start - offset else {
                    throw malformed(record, "\(signature) mluc record \(r) outside its element")
                }
                return Run(range: (start + offset)..<(start + offset + length), utf16: true)
            }
        default:
            return []
        }
    }

    /// The readable text of the runs, each decoded by its encoding; empty when all is zero or space.
    private static func text(_ p: [UInt8], _ runs: [Run]) -> String {
        var parts: [String] = []
        for run in runs {
            let bytes = Array(p[run.range])
            let units = stride(from: 0, to: bytes.count - 1, by: 2).map {
                UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1])
            }
            let string = run.utf16 ? String(decoding: units, as: UTF16.self) : String(decoding: bytes, as: UTF8.self)
            let blank: (Character) -> Bool = { $0.isWhitespace || $0.unicodeScalars.allSatisfy { $0.value < 0x20 } }
            let trimmed = String(string.drop(while: blank).reversed().drop(while: blank).reversed())
            if !trimmed.isEmpty, !parts.contains(trimmed) { parts.append(trimmed) }
        }
        return parts.joined(separator: " / ")
    }
}

extension ItemCollector {
    /// One child item per text tag under the profile's item, each separable: removing it blanks it in place.
    mutating func iccTextTags(_ profile: [UInt8], parent: Int, location: String) -> ICCTextTags? {
        do {
            let tags = try ICCTextTags(profile, path: location)
            for tag in tags.tags {
                let category = ICCTextTags.categories[tag.signature] ?? .identity
                let index = add("icc:\(tag.signature)", category, location: "\(location)/\(tag.signature)",
                                offset: items[parent].offset, length: Int64(tag.characters.reduce(0) { $0 + $1.count }),
                                value: tag.text, detail: "ICC profile text tag \(tag.signature)", parent: parent)
                items[index].separable = true
            }
            return tags
        } catch {
            notes.append(Note(.warning, code: "icc-unread", "the ICC profile's tag table could not be read: \(error)"))
            return nil
        }
    }
}

/// A profile's text tags and the items that stand for them, kept by a handler for its cleaner.
struct ICCTextEdit: Sendable {
    let profile: [UInt8]
    let tags: ICCTextTags
    /// Item index → tag signature.
    let items: [Int: String]

    /// Lists the profile's text tags under `parent`; nil when it has none or cannot be read.
    init?(_ profile: [UInt8], parent: Int, location: String, into found: inout ItemCollector) {
        let first = found.next
        guard let tags = found.iccTextTags(profile, parent: parent, location: location), !tags.tags.isEmpty else {
            return nil
        }
        self.profile = profile
        self.tags = tags
        self.items = Dictionary(uniqueKeysWithValues: tags.tags.enumerated().map {
            (first + $0.offset, $0.element.signature)
        })
    }

    /// The profile with the tags the plan removes blanked, or nil when it keeps them all.
    func blanked(keeps: (Int) -> Bool) -> [UInt8]? {
        let removed = Set(items.filter { !keeps($0.key) }.map(\.value))
        return removed.isEmpty ? nil : tags.blanked(profile, signatures: removed)
    }

    /// Marks the removed tag items as removed in a clean's outcomes.
    func record(keeps: (Int) -> Bool, into result: inout CleanResult) {
        for item in items.keys where !keeps(item) { result.outcomes[item] = .removed }
    }
}

/// For writers that carry a decoded image's profile into a new file (conversion): the same blanking the remux
/// cleaners do, decided by the policy on the items the profile's text tags would be.
public enum ICCProfileText {
    /// The profile with the text tags the policy removes blanked and its ID zeroed; unchanged when the policy keeps
    /// them all or the tag table cannot be read (the output's own scan then decides).
    public static func cleaned(_ profile: [UInt8], policy: Policy) -> [UInt8] {
        guard let tags = try? ICCTextTags(profile, path: "ICC") else { return profile }
        let removed = Set(tags.tags.filter { tag in
            let category = ICCTextTags.categories[tag.signature] ?? .identity
            let item = MetadataItem(key: "icc:\(tag.signature)", category: category, location: "ICC/\(tag.signature)")
            return policy.decide(item).0 != .keep
        }.map(\.signature))
        return removed.isEmpty ? profile : tags.blanked(profile, signatures: removed)
    }
}
