// SPDX-License-Identifier: GPL-3.0-or-later
import CNettle
import CQPDF
import MetascrubCore

/// A digest of what draws each page: its content streams (decoded), and everything its dictionary reaches
/// (resources, fonts, images, annotations, inherited boxes and rotation), streams by their stored bytes, without
/// object numbers (a fresh write renumbers) and without the keys a clean removes. Equal digests before and
/// after a clean mean QPDF hands a renderer the same page.
struct PDFContentDigest {
    /// Keys that hold metadata or navigation, not drawing: a clean may remove the first ones, and /Parent and
    /// /P lead back up to the page tree.
    /// An attached file (/EF, /RF) is not drawn either: a file attachment annotation shows its icon.
    static let skipped: Set<String> = [
        "/Metadata", "/PieceInfo", "/LastModified", "/Thumb", "/AA", "/Parent", "/P", "/Length", "/EF", "/RF",
    ]
    static let annotationMetadata: Set<String> = ["/T", "/M", "/CreationDate"]
    static let inherited = ["/Resources", "/MediaBox", "/CropBox", "/Rotate"]

    let document: QPDFDocument

    init(_ document: QPDFDocument) { self.document = document }

    func pages() throws -> [[UInt8]] {
        let count = document.pageCount
        try document.check("page tree")
        return try (0..<max(0, count)).map { index in
            let page = document.page(index)
            var hasher = Hasher256()
            var seen: [PDFRef: Int] = [:]
            // A page without /Contents is a blank page (legal, and what generators write for one): its content is empty.
            let contents = document.has(page, "/Contents") ? document.pageContent(page) : []
            guard let content = contents else {
                throw MetascrubError.malformed(format: "PDF", path: "page \(index + 1)/Contents", offset: 0,
                                               reason: "QPDF cannot decode the page's content streams")
            }
            hasher.add("content \(content.count)")
            hasher.add(content)
            for key in Self.inherited {
                hasher.add(key)
                if let value = inheritedValue(page, key) { add(value, &hasher, &seen, depth: 0) }
            }
            add(page, &hasher, &seen, depth: 0)
            return hasher.finish()
        }
    }

    /// An attribute a page inherits from the page tree when it does not set it.
    private func inheritedValue(_ page: QPDFDocument.Handle, _ key: String) -> QPDFDocument.Handle? {
        var node = page
        for _ in 0..<64 {
            if document.has(node, key) { return document.get(node, key) }
            guard document.has(node, "/Parent") else { return nil }
            node = document.get(node, "/Parent")
        }
        return nil
    }

    private func add(_ oh: QPDFDocument.Handle, _ hasher: inout Hasher256, _ seen: inout [PDFRef: Int], depth: Int) {
        guard depth < PDFScanner.depthLimit else { hasher.add("deep"); return }
        if let ref = document.ref(oh) {
            if let order = seen[ref] { hasher.add("seen \(order)"); return }
            seen[ref] = seen.count
        }
        switch document.type(oh) {
        case ot_array:
            let count = document.count(oh)
            hasher.add("[\(count)")
            for index in 0..<count { add(document.item(oh, index), &hasher, &seen, depth: depth + 1) }
        case ot_dictionary, ot_stream:
            let stream = document.isStream(oh)
            hasher.add(stream ? "stream<<" : "<<")
            // An annotation's author and times are not drawn (a clean removes them from reviewers' annotations).
            let annotation = document.has(oh, "/Rect")
            for key in document.keys(oh) where !Self.skipped.contains(key) && !(annotation && Self.annotationMetadata.contains(key)) {
                hasher.add(key)
                add(document.get(oh, key), &hasher, &seen, depth: depth + 1)
            }
            if stream {
                let data = document.streamData(oh, decoded: false) ?? []
                hasher.add("data \(data.count)")
                hasher.add(data)
            }
        default:
            hasher.add(document.unparsed(oh))
        }
    }
}

/// SHA-256 over a sequence of parts, each framed by its length so that no two sequences hash alike.
struct Hasher256 {
    private var context = sha256_ctx()

    init() { nettle_sha256_init(&context) }

    mutating func add(_ bytes: [UInt8]) {
        var length = UInt64(bytes.count).bigEndian
        withUnsafeBytes(of: &length) { nettle_sha256_update(&context, 8, $0.baseAddress?.assumingMemoryBound(to: UInt8.self)) }
        bytes.withUnsafeBufferPointer { nettle_sha256_update(&context, $0.count, $0.baseAddress) }
    }

    mutating func add(_ text: String) { add(Array(text.utf8)) }

    mutating func finish() -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        nettle_sha256_digest(&context, 32, &digest)
        return digest
    }
}
