// SPDX-License-Identifier: GPL-3.0-or-later
import CQPDF
import MetascrubCore

/// What the PDF scanner found, for the cleaner: which key of which dictionary each item stands for, the XMP
/// packets with their properties' items, the attached files, and a digest of every page's content for the check.
public struct PDFLayout: Sendable {
    struct Packet: Sendable {
        /// The dictionary whose /Metadata the packet is.
        var owner: PDFPlace
        var packet: [UInt8]
        var keys: [Int: String]
    }

    struct Attachment: Sendable {
        var item: Int
        /// The file specification (its /EF holds the file) and the embedded file stream itself.
        var fileSpec: PDFPlace
        var stream: PDFPlace
        /// In the catalog's /EmbeddedFiles name tree (not an annotation's or an action's own file).
        var listed: Bool
    }

    /// Item → the dictionary and key it stands for: removing the item removes the key.
    var keys: [Int: (place: PDFPlace, key: String)] = [:]
    var packets: [Packet] = []
    var attachments: [Attachment] = []
    /// The catalog's /Names dictionary, when embedded files are listed in it.
    var namesDictionary: PDFPlace?
    var pageDigests: [[UInt8]] = []
}

/// Walks every object reachable from the trailer once (what a fresh write keeps) and itemises what identifies
/// the document or its authors. Objects nothing references are not walked: the clean drops them, with every
/// earlier revision.
struct PDFScanner {
    /// Nesting deeper than this is refused: QPDF itself refuses deeper than 500 while parsing.
    static let depthLimit = 200
    static let objectLimit = 2_000_000

    let document: QPDFDocument
    var found: ItemCollector
    var layout = PDFLayout()
    private var visited = Set<PDFRef>()
    private var catalog: PDFRef?
    private var info: PDFRef?

    init(_ document: QPDFDocument, options: ScanOptions) {
        self.document = document
        found = ItemCollector(options)
    }

    static func scan(_ input: any ByteSource, options: ScanOptions) throws -> ScanResult<PDFLayout> {
        let document = try QPDFDocument(input)
        var scanner = PDFScanner(document, options: options)
        if let repaired = document.repaired, case .malformed(_, _, let offset, let reason) = repaired {
            try scanner.found.damaged(repaired, at: offset, "QPDF repaired the document while reading it (\(reason)); every object it "
                + "found is walked and the file is written fresh")
        }
        try scanner.walkTrailer()
        scanner.layout.pageDigests = try PDFContentDigest(document).pages()
        try scanner.freshWrite()
        return scanner.found.result(scanner.layout)
    }

    private mutating func walkTrailer() throws {
        // A local copy: the values below are rendered lazily, while `remove` mutates self.
        let document = document
        let trailer = document.trailer
        let root = document.root
        try document.check("trailer")
        catalog = document.ref(root)
        if document.has(trailer, "/Info") { info = document.ref(document.get(trailer, "/Info")) }
        let place = PDFPlace(object: nil)
        for key in document.keys(trailer) {
            let value = document.get(trailer, key)
            switch key {
            case "/Root", "/Info":
                try visit(value, place.appending(.key(key)), depth: 1)
            case "/ID":
                continue
            case "/Size", "/Prev", "/Encrypt", "/XRefStm", "/Type", "/W", "/Index", "/Filter", "/Length", "/DecodeParms":
                continue
            default:
                remove(key, in: place, "pdf:trailer\(key)", NameClassifier.category(of: key, otherwise: .content),
                       location: "trailer\(key)", value: document.text(value), detail: "trailer entry", unknown: true)
            }
        }
        try document.check("trailer")
    }

    /// What a fresh write would not keep. The trailer's /ID is an item unless it is the one a fresh write computes
    /// from this very content (a file metascrub cleaned: writing it again gives the same bytes), which identifies
    /// nothing but the content. Any other difference from a fresh write — an earlier revision, an object nothing
    /// refers to, a comment, bytes after the last %%EOF, another writer's layout — is bytes no reader here read: one
    /// `unknown` item, so a file carrying them is never passed on as clean. Last, as finding out writes the document.
    private mutating func freshWrite() throws {
        let document = document
        let trailer = document.trailer
        // Written with its /ID as it is: the same bytes when nothing but objects the walk saw is in the file.
        let fresh = try document.written() == document.bytes
        if document.has(trailer, "/ID") {
            let id = String(decoding: document.unparsed(document.get(trailer, "/ID")), as: UTF8.self)
            document.remove(trailer, "/ID")
            if try document.written() != document.bytes {
                remove("/ID", in: PDFPlace(object: nil), "pdf:ID", .identity, location: "trailer/ID", value: id,
                       detail: "document identifier (a clean writes one computed from the cleaned content)")
            }
        }
        guard !fresh else { return }
        found.add("pdf:unwritten", .content, location: "file",
                  detail: "bytes a fresh write does not keep (earlier revisions, objects nothing refers to, comments, "
                      + "data after %%EOF)", unknown: true)
    }

    /// Visits an object: an indirect one once, a dictionary or stream's keys by what they are, arrays by item.
    private mutating func visit(_ oh: QPDFDocument.Handle, _ from: PDFPlace, depth: Int) throws {
        guard depth <= Self.depthLimit else {
            throw MetascrubError.limitExceeded(format: "PDF", path: from.description, offset: 0, limit: "\(Self.depthLimit) levels")
        }
        var place = from
        if let ref = document.ref(oh) {
            guard visited.insert(ref).inserted else { return }
            guard visited.count <= Self.objectLimit else {
                throw MetascrubError.limitExceeded(format: "PDF", path: from.description, offset: 0, limit: "\(Self.objectLimit) objects")
            }
            place = PDFPlace(object: ref)
        }
        switch document.type(oh) {
        case ot_array:
            for index in 0..<document.count(oh) { try visit(document.item(oh, index), place.appending(.index(index)), depth: depth + 1) }
        case ot_dictionary, ot_stream:
            try dictionary(oh, place, depth: depth)
        default:
            break
        }
    }

    private mutating func dictionary(_ oh: QPDFDocument.Handle, _ place: PDFPlace, depth: Int) throws {
        // A local copy: the values below are rendered lazily, while `remove` mutates self.
        let document = document
        let ref = place.steps.isEmpty ? place.object : nil
        if let ref, ref == info { return infoDictionary(oh, place) }
        let isCatalog = ref != nil && ref == catalog
        let isPage = document.name(document.get(oh, "/Type")) == "/Page"
        let isMarkup = document.has(oh, "/Rect") && Self.markupAnnotations.contains(document.name(document.get(oh, "/Subtype")) ?? "")
        let what = isCatalog ? "catalog" : isPage ? "page" : isMarkup ? "annotation" : "object"
        let prefix = what == "object" ? "\(place)" : "\(what) \(place)"
        for key in document.keys(oh) {
            let value = document.get(oh, key)
            let location = "\(prefix)/\(key.dropFirst())"
            switch key {
            case "/Metadata" where document.isStream(value):
                xmp(value, owner: place, location: "\(prefix)/Metadata")
            case "/PieceInfo":
                // The application's private objects it points to are not read (they held a user's path in a file
                // made for it): unknown, so no policy keeps them for the name of the category alone.
                remove(key, in: place, "pdf:PieceInfo", .software, location: location, value: document.text(value),
                       detail: "\(what) /PieceInfo: the editing application's private data", unknown: true)
            case "/LastModified" where isPage || isCatalog || document.isStream(oh):
                remove(key, in: place, "pdf:LastModified", .time, location: location, value: document.text(value),
                       detail: "\(what) modification time")
            case "/Thumb" where isPage:
                remove(key, in: place, "pdf:Thumb", .embedded, location: location, detail: "page thumbnail image")
            case "/OpenAction" where isCatalog && document.isDictionary(value), "/AA" where isCatalog || isPage:
                remove(key, in: place, "pdf:\(key.dropFirst())", .content, location: location, value: Self.actionText(value, document),
                       detail: "\(what) action run when the document opens (a URI or a script)")
            case "/SpiderInfo" where isCatalog:
                remove(key, in: place, "pdf:SpiderInfo", .content, location: location, detail: "web capture: where pages came from")
            case "/Names" where isCatalog:
                try names(value, place.appending(.key(key)), depth: depth + 1)
            case "/T" where isMarkup:
                remove(key, in: place, "pdf:Annot/T", .identity, location: location, value: document.text(value),
                       detail: "who wrote the annotation")
            case "/M" where isMarkup, "/CreationDate" where isMarkup:
                remove(key, in: place, "pdf:Annot\(key)", .time, location: location, value: document.text(value),
                       detail: "when the annotation was made or changed")
            case "/EF" where document.isDictionary(value):
                let named = ["/UF", "/F"].first { document.has(oh, $0) }.map { document.text(document.get(oh, $0)) } ?? "unnamed"
                fileSpecification(oh, place, name: named, location: location, listed: false)
            case "/AF" where isCatalog:
                remove(key, in: place, "pdf:AF", .embedded, location: location, detail: "associated files of the document")
            case _ where isCatalog && !Self.catalogKeys.contains(key):
                remove(key, in: place, "pdf:catalog\(key)", NameClassifier.category(of: String(key.dropFirst()), otherwise: .content),
                       location: location, value: document.text(value), detail: "catalog entry no PDF standard defines", unknown: true)
            default:
                try visit(value, place.appending(.key(key)), depth: depth + 1)
            }
        }
    }

    /// What an action does, for the report: the URI it opens or the script it runs, else the action as PDF.
    private static func actionText(_ action: QPDFDocument.Handle, _ document: QPDFDocument) -> String {
        for key in ["/URI", "/JS"] where document.has(action, key) && !document.isStream(document.get(action, key)) {
            return document.text(document.get(action, key))
        }
        return document.text(action)
    }

    /// Annotations a reviewer writes (PDF 2.0, 12.5.6.2), whose /T names the reviewer; a widget's /T is its form
    /// field's name and stays.
    static let markupAnnotations: Set<String> = [
        "/Text", "/FreeText", "/Line", "/Square", "/Circle", "/Polygon", "/PolyLine", "/Highlight", "/Underline",
        "/Squiggly", "/StrikeOut", "/Stamp", "/Caret", "/Ink", "/FileAttachment", "/Sound", "/Redact", "/Popup",
    ]

    /// Keys of the document catalog the PDF 2.0 standard defines; any other is an application's own.
    static let catalogKeys: Set<String> = [
        "/Type", "/Version", "/Extensions", "/Pages", "/PageLabels", "/Names", "/Dests", "/ViewerPreferences",
        "/PageLayout", "/PageMode", "/Outlines", "/Threads", "/OpenAction", "/AA", "/URI", "/AcroForm", "/Metadata",
        "/StructTreeRoot", "/MarkInfo", "/Lang", "/SpiderInfo", "/OutputIntents", "/PieceInfo", "/OCProperties",
        "/Perms", "/Legal", "/Requirements", "/Collection", "/NeedsRendering", "/DSS", "/AF", "/DPartRoot",
    ]

    /// Every entry of the Info dictionary is an item: the standard ones by what they say, others unknown.
    private mutating func infoDictionary(_ oh: QPDFDocument.Handle, _ place: PDFPlace) {
        // A local copy: the values below are rendered lazily, while `remove` mutates self.
        let document = document
        for key in document.keys(oh) {
            let value = document.get(oh, key)
            let known = Self.infoCategories[key]
            let category = known ?? NameClassifier.category(of: String(key.dropFirst()), otherwise: .content)
            remove(key, in: place, "pdf:Info\(key)", category, location: "Info\(key)", value: document.text(value),
                   detail: known == nil ? "Info entry no PDF standard defines" : "document information", unknown: known == nil)
        }
    }

    static let infoCategories: [String: Category] = [
        "/Author": .identity, "/Creator": .software, "/Producer": .software, "/CreationDate": .time, "/ModDate": .time,
        "/Title": .content, "/Subject": .content, "/Keywords": .content, "/Trapped": .content,
    ]

    /// The catalog's name dictionary: document-level scripts and attached files.
    private mutating func names(_ oh: QPDFDocument.Handle, _ place: PDFPlace, depth: Int) throws {
        // A local copy: the values below are rendered lazily, while `remove` mutates self.
        let document = document
        let place = document.ref(oh).map { PDFPlace(object: $0) } ?? place
        for key in document.keys(oh) {
            let value = document.get(oh, key)
            switch key {
            case "/JavaScript":
                remove(key, in: place, "pdf:JavaScript", .content, location: "catalog/Names/JavaScript",
                       detail: "document-level scripts")
            case "/EmbeddedFiles":
                layout.namesDictionary = place
                try embeddedFiles(value, place.appending(.key(key)), depth: depth + 1)
            default:
                try visit(value, place.appending(.key(key)), depth: depth + 1)
            }
        }
    }

    /// A name tree of attached files: each one an item, its bytes looked into by their own handler.
    private mutating func embeddedFiles(_ node: QPDFDocument.Handle, _ from: PDFPlace, depth: Int) throws {
        guard depth <= Self.depthLimit else {
            throw MetascrubError.limitExceeded(format: "PDF", path: from.description, offset: 0, limit: "\(Self.depthLimit) levels")
        }
        let place = document.ref(node).map { PDFPlace(object: $0) } ?? from
        if let ref = document.ref(node) { guard visited.insert(ref).inserted else { return } }
        let kids = document.get(node, "/Kids")
        for index in 0..<document.count(kids) {
            try embeddedFiles(document.item(kids, index), place.appending(.key("/Kids")).appending(.index(index)), depth: depth + 1)
        }
        let names = document.get(node, "/Names")
        for index in stride(from: 0, to: document.count(names) - 1, by: 2) {
            let name = document.text(document.item(names, index))
            let spec = document.item(names, index + 1)
            let specPlace = document.ref(spec).map { PDFPlace(object: $0) } ?? place.appending(.key("/Names")).appending(.index(index + 1))
            if let ref = document.ref(spec) { visited.insert(ref) }
            fileSpecification(spec, specPlace, name: name, location: "EmbeddedFiles/\(name)", listed: true)
        }
    }

    /// A file specification whose /EF holds the file itself: an item, its bytes handed to their own handler.
    /// `listed`: named in the catalog's list of attached files (others hang from annotations or actions).
    private mutating func fileSpecification(_ spec: QPDFDocument.Handle, _ place: PDFPlace, name: String, location: String,
                                            listed: Bool) {
        let ef = document.get(spec, "/EF")
        let stream = document.has(ef, "/F") ? document.get(ef, "/F") : document.get(ef, "/UF")
        guard document.isStream(stream), let streamRef = document.ref(stream) else { return }
        visited.insert(streamRef)
        let bytes = document.streamData(stream, decoded: true)
        let item = found.add("pdf:EmbeddedFile", .embedded, location: location, value: name,
                             detail: "attached file \"\(name)\", \(bytes?.count ?? 0) bytes")
        layout.attachments.append(.init(item: item, fileSpec: place, stream: PDFPlace(object: streamRef), listed: listed))
        if let bytes { _ = found.embeddedFile(bytes, item: item, origin: nil) }
    }

    /// A /Metadata stream's XMP packet: each property an item, through the shared XMP reader.
    private mutating func xmp(_ stream: QPDFDocument.Handle, owner: PDFPlace, location: String) {
        // A local copy: the values below are rendered lazily, while `remove` mutates self.
        let document = document
        if let ref = document.ref(stream) { visited.insert(ref) }
        guard let packet = document.streamData(stream, decoded: true) else {
            remove("/Metadata", in: owner, "pdf:Metadata", .content, location: location,
                   detail: "metadata stream QPDF cannot decode", unknown: true)
            return
        }
        let first = found.next
        let keys = found.xmp(packet, location: location, origin: 0)
        // The packet's bytes have no place in the file of their own (a stream may be compressed): its
        // properties are found by value.
        for index in first..<found.next { found.items[index].offset = nil; found.items[index].length = nil }
        layout.packets.append(.init(owner: owner, packet: packet, keys: keys))
    }

    private mutating func remove(_ key: String, in place: PDFPlace, _ itemKey: String, _ category: Category, location: String,
                                 value: @autoclosure () -> String? = nil, detail: String, unknown: Bool = false) {
        let item = found.add(itemKey, category, location: location, value: value(), detail: detail, unknown: unknown)
        layout.keys[item] = (place, key)
    }
}
