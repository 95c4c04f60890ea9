// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// User data (`udta`) and iTunes-style `meta`/`ilst` atoms: each atom one item.
extension MP4Scanner {
    mutating func scanUserData(_ udta: MovieNode) throws {
        for atom in udta.children {
            switch atom.type {
            case "meta": try scanMeta(atom)
            case "XMP_": try scanXMP(atom.box, payloadOffset: atom.box.payloadOffset)
            case "free", "skip", "wide": try scanPadding(atom.box)
            default:
                let known = MP4Atoms.atoms[atom.type]
                let category = known?.category ?? NameClassifier.category(of: atom.type.description, otherwise: .device)
                let text = try? userDataText(atom.box)
                let item = add("mp4:udta/\(atom.type)", category, atom.box, detail: known.map { "\($0.name) (\(atom.box.size) bytes)" } ?? "user data atom, \(atom.box.size) bytes",
                               value: text, unknown: known == nil, edit: .drop(atom.box))
                try inspect(item, atom.box)
            }
        }
    }

    /// Kept or dropped whole: a position or metadata block inside the atom decides it (`ContentInspector`).
    mutating func inspect(_ item: Int, _ box: Box) throws {
        guard found.items[item].category != .location, box.payloadSize > 0 else { return }
        found.inspect(item, payload: try source.read(at: box.payloadOffset, count: Int(min(box.payloadSize, Int64(ContentInspector.limit)))),
                      origin: box.payloadOffset)
    }

    /// A short rendering of a udta string atom (QuickTime international text or 3GPP) for `--show-values`.
    func userDataText(_ box: Box) throws -> String? {
        guard found.options.includeValues else { return nil }
        let payload = try source.read(at: box.payloadOffset, count: Int(min(box.payloadSize, 256)))
        let text = payload.filter { (0x20...0x7E).contains($0) }
        return text.isEmpty ? nil : String(decoding: text, as: UTF8.self)
    }

    mutating func scanMeta(_ meta: MovieNode) throws {
        var keys: [String] = []
        if let keysNode = meta.child("keys") {
            let payload = try reader.payload(of: keysNode.box)
            var c = ByteCursor(payload, origin: keysNode.box.payloadOffset, format: format, path: keysNode.box.path)
            _ = try c.fullBoxHeader()
            let count = Int(try c.u32("key count"))
            guard count <= c.remaining / 8 else { throw c.malformed("\(count) keys do not fit in the box") }
            for _ in 0..<count {
                let size = Int(try c.u32("key size"))
                guard size >= 8 else { throw c.malformed("key of \(size) bytes") }
                try c.skip(4, "key namespace")
                keys.append(String(decoding: try c.take(size - 8, "key"), as: UTF8.self))
            }
        }
        for child in meta.children {
            switch child.type {
            case "hdlr", "keys", "dinf": continue
            case "ilst":
                for entry in child.children {
                    let index = Int(entry.type.value)
                    let name: String
                    let category: Category
                    var known = true
                    if !keys.isEmpty, index >= 1, index <= keys.count {
                        name = "mp4:keys/\(keys[index - 1])"
                        (category, known) = MP4Atoms.keyCategory(keys[index - 1])
                    } else if let atom = MP4Atoms.atoms[entry.type] {
                        name = "mp4:ilst/\(entry.type)"
                        category = atom.category
                    } else {
                        name = "mp4:ilst/\(entry.type)"
                        category = NameClassifier.category(of: entry.type.description, otherwise: .content)
                        known = false
                    }
                    let text = try? ilstText(entry.box)
                    let item = add(name, category, entry.box, detail: "metadata item, \(entry.box.size) bytes", value: text,
                                   unknown: !known, edit: .drop(entry.box))
                    // Cover art is an embedded file with its own handling; text and binary entries are looked into.
                    if entry.type == "covr" { try scanCover(entry.box, item: item) } else { try inspect(item, entry.box) }
                }
            case "xml ":
                try scanXMP(child.box, payloadOffset: child.box.payloadOffset + 4)
            case "free", "skip", "wide":
                try scanPadding(child.box)
            default:
                add("mp4:meta/\(child.type)", NameClassifier.category(of: child.type.description, otherwise: .content), child.box,
                    detail: "meta box \(child.type), \(child.box.size) bytes", unknown: true, edit: .drop(child.box))
            }
        }
    }

    /// Cover art: a `covr` entry holding one `data` box (type, locale, then the picture) is looked into as a
    /// file of its own (`EmbeddedFile`); the cleaner rebuilds the entry around the cleaned picture.
    mutating func scanCover(_ box: Box, item: Int) throws {
        guard box.payloadSize >= 24, box.payloadSize <= Int64(EmbeddedFile.sizeLimit) else { return }
        let payload = try reader.payload(of: box)
        guard BigEndian.u32(payload, 0) == payload.count, FourCC(bytes: payload[4..<8]) == "data" else { return }
        if found.embeddedFile(Array(payload[16...]), item: item, origin: box.payloadOffset + 16) { layout.covers[item] = box }
    }

    /// The text of an ilst entry's `data` box (type 1: UTF-8) for `--show-values`.
    func ilstText(_ box: Box) throws -> String? {
        guard found.options.includeValues else { return nil }
        let payload = try source.read(at: box.payloadOffset, count: Int(min(box.payloadSize, 512)))
        guard payload.count >= 16, FourCC(bytes: payload[4..<8]) == "data" else { return nil }
        let type = BigEndian.u32(payload, 8) & 0xFFFFFF
        guard type == 1 else { return "(binary)" }
        let size = min(BigEndian.u32(payload, 0), payload.count)
        return size > 16 ? String(decoding: payload[16..<size], as: UTF8.self) : ""
    }
}
