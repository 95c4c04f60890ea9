// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubFormats

/// Files that are not media metascrub reads, but that commonly carry the same kind of metadata: a PDF with
/// /Author, an office document with its editor's name.
/// Passing them as "not media" would let a publish gate succeed with the position still in the output, so they are
/// recognised by their magic and reported as not checked (scan), left out of a mirrored folder (clean --output-dir)
/// unless --copy-unsupported. The format table (`FormatRegistry`) is the media metascrub cleans; this list is only
/// what it must not wave through.
enum UncheckedFormats {
    /// The format's name when `head` (the file's first bytes) is one of them.
    static func detect(_ head: [UInt8]) -> String? {
        if starts(head, [0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1]) { return "Microsoft Office (OLE2)" }
        if starts(head, [0x50, 0x4B, 0x03, 0x04]) { return zipDocument(head) }
        return nil
    }

    /// EPUB and OpenDocument name their type in a first, stored `mimetype` entry; OOXML starts with its
    /// `[Content_Types].xml` or its `_rels`/`docProps` parts. A plain zip is an archive, not a document.
    private static func zipDocument(_ head: [UInt8]) -> String? {
        if contains(head, "mimetypeapplication/epub+zip") { return "EPUB" }
        if contains(head, "mimetypeapplication/vnd.oasis.opendocument") { return "OpenDocument" }
        if contains(head, "[Content_Types].xml") || contains(head, "_rels/.rels") || contains(head, "docProps/")
            || contains(head, "word/") || contains(head, "xl/") || contains(head, "ppt/") {
            return "Office Open XML"
        }
        return nil
    }

    private static func starts(_ head: [UInt8], _ magic: [UInt8]) -> Bool { head.starts(with: magic) }

    private static func contains(_ head: some Collection<UInt8>, _ text: String) -> Bool {
        let needle = Array(text.utf8)
        let hay = Array(head)
        guard hay.count >= needle.count else { return false }
        return (0...(hay.count - needle.count)).contains { i in hay[i..<(i + needle.count)].elementsEqual(needle) }
    }
}

/// How the pipeline answers for files it cannot vouch for: empty media, and the documents above.
extension FileProcessor {
    /// A zero-byte file named as media (`IMG_1.jpg`) is a failed copy or upload, not a clean photo: the same
    /// error whether it is scanned, cleaned to a file or in place (a zero-byte `.gitkeep` is still not media).
    static func refuseEmptyMedia(_ source: any ByteSource, _ path: String) throws(MetascrubError) {
        guard source.size == 0, HookFilePattern.isMediaName(path) else { return }
        throw .unsupported(format: "empty file", reason: "\(path) is empty (0 bytes): no media to check or clean; nothing was written")
    }

    static let notCheckedPrefix = "not checked: "
    static func notChecked(_ format: String) -> String { "\(notCheckedPrefix)\(format) is not supported" }

    /// A document that is not media but carries metadata of its own (`UncheckedFormats`), by its first bytes.
    static func unchecked(_ source: any ByteSource) throws -> String? {
        UncheckedFormats.detect(try source.read(at: 0, count: Int(min(1024, source.size))))
    }

    /// Such a document is never passed on as clean: left out (reported as not checked, the run fails) unless
    /// --copy-unsupported copies it unchanged (or, in place, leaves it) with a warning.
    func passOn(unchecked format: String, _ source: FileByteSource, mode: OutputMode, target: String,
                        report: inout FileReport) throws {
        report.status = .skipped
        guard options.copyUnsupported else {
            report.reason = Self.notChecked(format) + (mode == .inPlace ? "" : "; left out (--copy-unsupported copies it unchanged)")
            report.notes.append(Note(.warning, code: "not-checked", "\(format) may carry metadata metascrub cannot read or remove"))
            return
        }
        if mode != .inPlace {
            if options.digests { report.sha256Before = try Hashing.sha256(source) }
            let createFolders: Bool
            if case .directory = mode { createFolders = true } else { createFolders = false }
            try write(copyOf: source, to: FileDestination(path: target, createFolders: createFolders, options: options, attributesFrom: source),
                      report: &report)
            report.method = .copy
        }
        report.reason = "unsupported: \(format) \(mode == .inPlace ? "left" : "copied") unchanged (--copy-unsupported)"
        report.notes.append(Note(.warning, code: "not-checked", "\(format) was not checked: its metadata, if any, is still there"))
    }
}
