// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// PDF through QPDF: the Info dictionary, XMP metadata streams (the catalog's and any object's), /PieceInfo,
/// page thumbnails and modification times, opening actions and document scripts, attached files (cleaned by
/// their own handler or removed) and the document /ID. The output is written fresh by QPDF: only objects still
/// referenced, no incremental update (so no earlier revision survives), stream data copied as stored, and a
/// deterministic /ID computed from the cleaned content, so a second clean gives the same bytes.
public struct PDFFormat: FormatHandler {
    public init() {}

    public func scan(_ input: any ByteSource, options: ScanOptions) throws -> ScanResult<PDFLayout> {
        try PDFScanner.scan(input, options: options)
    }

    public func clean(_ input: any ByteSource, scan: ScanResult<PDFLayout>, plan: CleanPlan,
                      to output: any OutputSink) throws -> CleanResult {
        let layout = scan.layout
        let document = try QPDFDocument(input)
        // Attached files first: their streams are found by the places the scan recorded, which removing a
        // name tree or a file specification's /EF would cut off.
        try attachments(layout, scan.cleanedEmbeddedFiles(plan), plan, document)
        for packet in layout.packets {
            guard let owner = document.resolve(packet.owner), document.has(owner, "/Metadata") else { continue }
            guard let rebuilt = try XMPItems.rebuild(packet: packet.packet, keys: packet.keys, keeps: plan.keeps) else {
                document.remove(owner, "/Metadata")
                continue
            }
            if rebuilt != packet.packet { document.replaceData(document.get(owner, "/Metadata"), rebuilt) }
        }
        for (item, target) in layout.keys.sorted(by: { $0.key < $1.key }) where !plan.keeps(item) {
            if let dictionary = document.resolve(target.place) { document.remove(dictionary, target.key) }
        }
        // An Info dictionary left empty goes too.
        let trailer = document.trailer
        if document.has(trailer, "/Info"), document.keys(document.get(trailer, "/Info")).isEmpty { document.remove(trailer, "/Info") }
        try document.check("cleaning")
        try output.write(try document.written())
        return CleanResult(method: .remux)
    }

    /// Attached files kept cleaned get their cleaned bytes (with /Params reduced to the new size: the original's
    /// checksum identifies it, its dates are metadata); removed ones go with the whole list when none stays,
    /// else each file specification loses its file.
    private func attachments(_ layout: PDFLayout, _ cleaned: [Int: [UInt8]], _ plan: CleanPlan, _ document: QPDFDocument) throws {
        var removed: [PDFLayout.Attachment] = []
        for attachment in layout.attachments {
            if let bytes = cleaned[attachment.item], let stream = document.resolve(attachment.stream) {
                document.replaceData(stream, bytes)
                let params = document.dictionary()
                document.replace(params, "/Size", document.integer(bytes.count))
                document.replace(stream, "/Params", params)
            } else if !plan.keeps(attachment.item) {
                removed.append(attachment)
            }
        }
        guard !removed.isEmpty else { return }
        var stripped = removed
        // None of the listed files stays: the list goes, names and descriptions with it.
        if removed.filter(\.listed).count == layout.attachments.filter(\.listed).count,
           let names = layout.namesDictionary.flatMap({ document.resolve($0) }) {
            document.remove(names, "/EmbeddedFiles")
            stripped.removeAll(where: \.listed)
        }
        for attachment in stripped {
            guard let spec = document.resolve(attachment.fileSpec) else { continue }
            document.remove(spec, "/EF")
            document.remove(spec, "/RF")
        }
        try document.check("attached files")
    }

    public func verifyContent(original: any ByteSource, _ before: PDFLayout, cleaned: any ByteSource, _ after: PDFLayout,
                              result: CleanResult) throws -> ContentCheck {
        let method = "every page's content streams and what its dictionary reaches (resources, fonts, images, "
            + "annotations) by SHA-256 through QPDF"
        guard before.pageDigests.count == after.pageDigests.count else {
            return ContentCheck(method: method, passed: false,
                                detail: "\(before.pageDigests.count) pages became \(after.pageDigests.count)")
        }
        if let page = zip(before.pageDigests, after.pageDigests).enumerated().first(where: { $0.element.0 != $0.element.1 }) {
            return ContentCheck(method: method, passed: false, detail: "page \(page.offset + 1) differs")
        }
        var check = ContentCheck(method: method, passed: true)
        check.decoded = (try PDFDecodedStreams.of(original), try PDFDecodedStreams.of(cleaned))
        return check
    }
}
