// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// The SVG scanner's parse: what each item removes, named by node numbers (`SVGDocument.nodes`) that a clean
/// re-parsing the same bytes finds again, and the document's rendering projection for the verifier.
public struct SVGLayout: Sendable {
    enum Target: Sendable, Hashable {
        case node(Int)
        /// The element's `index`-th attribute.
        case attribute(node: Int, index: Int)
    }

    struct Image: Sendable {
        var node: Int
        var attribute: Int
        /// `data:image/jpeg;base64,` — kept as it is before the re-encoded file.
        var header: String
    }

    /// Item → the nodes and attributes it stands for (one item per distinct key: Inkscape writes hundreds).
    var targets: [Int: [Target]] = [:]
    /// An image in CSS: the `index`-th data image of an attribute's value, or of a text node (`attribute` nil).
    struct StyleImage: Sendable {
        var node: Int
        var attribute: Int?
        var index: Int
    }

    /// Item → an image held in a `data:` URI, cleaned as an embedded file.
    var images: [Int: Image] = [:]
    var styleImages: [Int: StyleImage] = [:]
    /// Everything that decides the rendering (`SVGProjection`): the verifier compares it before and after.
    var projection: [UInt8] = []
}

/// Lists an SVG's metadata by allow-list: elements and attributes of the SVG, XLink and XML namespaces stay;
/// `<metadata>` (RDF, Dublin Core), editor namespaces (`sodipodi:`, `inkscape:`) and any other foreign namespace,
/// comments and processing instructions are items, `<title>`/`<desc>` are content items, and images held in
/// `data:` URIs are embedded files looked into by their own handlers.
enum SVGScanner {
    static let svg = "http://www.w3.org/2000/svg"
    static let xlink = "http://www.w3.org/1999/xlink"
    static let xml = "http://www.w3.org/XML/1998/namespace"
    static let editors: [String: String] = [
        "http://sodipodi.sourceforge.net/DTD/sodipodi-0.dtd": "sodipodi",
        "http://www.inkscape.org/namespaces/inkscape": "inkscape",
    ]

    /// An XML (or bare) document whose first element is `<svg`, after an optional BOM, declaration, comments and
    /// doctype.
    static func detect(_ head: [UInt8]) -> Bool {
        var bytes = head[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        let text = String(decoding: bytes, as: UTF8.self)
        let trimmed = text.drop { $0 == " " || $0 == "\n" || $0 == "\r" || $0 == "\t" }
        guard trimmed.hasPrefix("<") else { return false }
        return trimmed.hasPrefix("<svg")
            || (trimmed.hasPrefix("<?xml") || trimmed.hasPrefix("<!")) && text.contains("<svg")
    }

    static func scan(_ source: any ByteSource, options: ScanOptions) throws -> ScanResult<SVGLayout> {
        guard source.size <= Int64(SVGDocument.sizeLimit) else {
            throw MetascrubError.limitExceeded(format: "SVG", path: "document", offset: 0,
                limit: "\(SVGDocument.sizeLimit) bytes of XML")
        }
        let document = try SVGDocument(try source.read(at: 0, count: Int(source.size), format: "SVG", path: "document"))
        guard let root = document.root, document.name(root) == "svg" else {
            throw MetascrubError.malformed(format: "SVG", path: "document", offset: 0,
                reason: "the root element is not <svg>")
        }
        // A root without a namespace (a bare <svg>) makes every unqualified element SVG.
        let bare = document.namespace(root) == nil
        func isSVG(_ ns: String?) -> Bool { ns == svg || (ns == nil && bare) }
        var found = ItemCollector(options)
        var layout = SVGLayout()
        var byKey: [String: Int] = [:]
        var removed = Set<Int>()
        func add(_ key: String, _ category: Category, _ target: SVGLayout.Target, location: String, value: String,
            detail: String,
                 unknown: Bool = false) {
            let item: Int
            if let existing = byKey[key] {
                item = existing
            } else {
                item = found.add(key, category, location: location, value: value, detail: detail, unknown: unknown)
                byKey[key] = item
            }
            layout.targets[item, default: []].append(target)
            let options = found.options
            found.lists { items, notes in
                _ = ContentInspector.inspect(Array(value.utf8), origin: 0, parent: item, options: options,
                    items: &items, notes: &notes)
            }
        }
        for i in document.nodes {
            if let parent = document.parent(i), removed.contains(parent) {
                removed.insert(i)
                continue
            }
            let location = "node#\(i)"
            switch document.type(i) {
            case .comment:
                add("svg:comment", .content, .node(i), location: location, value: document.content(i),
                    detail: "XML comment")
                removed.insert(i)
            case .processingInstruction where document.name(i) != "xml-stylesheet":
                add("svg:processing-instruction", .software, .node(i), location: location, value: document.content(i),
                    detail: "processing instruction <?\(document.name(i))?>", unknown: true)
                removed.insert(i)
            case .element:
                let ns = document.namespace(i), name = document.name(i)
                if !isSVG(ns) {
                    let prefix = ns.flatMap { editors[$0] } ?? document.prefix(i) ?? "foreign"
                    let editor = ns.map { editors[$0] != nil } ?? false
                    add("svg:\(prefix):\(name)", editor ? .software : .content, .node(i), location: location,
                        value: document.content(i),
                        detail: editor ? "editor data (\(prefix))" : "element in namespace \(ns ?? "none")",
                            unknown: !editor)
                    removed.insert(i)
                    continue
                }
                switch name {
                case "metadata":
                    add("svg:metadata", .identity, .node(i), location: location, value: document.content(i),
                        detail: "<metadata> (RDF, Dublin Core: creator, title, licence)")
                    removed.insert(i)
                    continue
                case "title", "desc":
                    add("svg:\(name)", .content, .node(i), location: location, value: document.content(i),
                        detail: "<\(name)> text")
                    removed.insert(i)
                    continue
                default: break
                }
                for (a, attribute) in document.attributes(i).enumerated() {
                    let ans = attribute.namespace
                    if ans == nil || ans == svg || ans == xlink || ans == xml {
                        if attribute.name == "href", let image = dataImage(attribute.value) {
                            let item = found.add("svg:image", .embedded, location: "\(location)/@href",
                                detail: "image in a data: URI (\(image.header))")
                            layout.images[item] = SVGLayout.Image(node: i, attribute: a, header: image.header)
                            found.embeddedFile(image.bytes, item: item, origin: nil)
                        } else if attribute.value.contains("data:image/") {
                            let text = Array(document.attributeText(i, a).utf8)
                            for (k, image) in SVGDataImages.find(text).enumerated() {
                                let item = found.add("svg:image", .embedded,
                                    location: "\(location)/@\(attribute.name)#\(k + 1)",
                                                     detail: "image in a data: URI in CSS (\(image.header))")
                                layout.styleImages[item] = SVGLayout.StyleImage(node: i, attribute: a, index: k)
                                found.embeddedFile(image.bytes, item: item, origin: nil)
                            }
                        } else if attribute.name == "href", namesLocalFile(attribute.value) {
                            // Inkscape links an imported image by the path it had on the author's disk: it renders
                            // nowhere else, and names their folders.
                            add("svg:linked-file", .identity, .attribute(node: i, index: a),
                                location: "\(location)/@href",
                                value: attribute.value, detail: "link to a file on the author's disk")
                        }
                        continue
                    }
                    let prefix = ans.flatMap { editors[$0] } ?? attribute.prefix ?? "foreign"
                    let editor = ans.map { editors[$0] != nil } ?? false
                    // A file name or path names its author's folders; the rest is editor state.
                    let names = attribute.name.contains("filename") || attribute.name == "docname"
                        || attribute.value.contains("/")
                        || attribute.value.contains("\\")
                    add("svg:\(prefix):\(attribute.name)", names ? .identity : editor ? .software : .content,
                        .attribute(node: i, index: a), location: "\(location)/@\(prefix):\(attribute.name)",
                            value: attribute.value,
                        detail: editor ? "editor attribute (\(prefix))" : "attribute in namespace \(ans ?? "none")",
                            unknown: !editor)
                }
            case .text, .cdata:
                guard let p = document.parent(i), document.name(p) == "style",
                    isSVG(document.namespace(p)) else { continue }
                for (k, image) in SVGDataImages.find(Array(document.content(i).utf8)).enumerated() {
                    let item = found.add("svg:image", .embedded, location: "\(location)#\(k + 1)",
                                         detail: "image in a data: URI in a style sheet (\(image.header))")
                    layout.styleImages[item] = SVGLayout.StyleImage(node: i, attribute: nil, index: k)
                    found.embeddedFile(image.bytes, item: item, origin: nil)
                }
            default:
                continue
            }
        }
        var attributes = Set<[Int]>()
        for case .attribute(let node, let index) in layout.targets.values.joined() { attributes.insert([node, index]) }
        layout.projection = SVGProjection.of(document, skipping: removed, attributes: attributes,
                                             images: Set(layout.images.values.map { [$0.node, $0.attribute] }))
        return found.result(layout)
    }

    /// A `file:` URI, a drive path or a path into a home folder: where a file was on the author's disk.
    static func namesLocalFile(_ value: String) -> Bool {
        let text = value.lowercased()
        let drive = text.count >= 3 && text.first!.isLetter && text.dropFirst().first == ":"
            && ["/", "\\"].contains(String(text.dropFirst(2).first!))
        return text.hasPrefix("file:") || drive || ["/home/", "/users/", "\\users\\",
            "/root/"].contains { text.contains($0) }
    }

    /// The header and decoded bytes of an image in a base64 `data:` URI (whitespace inside is allowed).
    static func dataImage(_ value: String) -> (header: String, bytes: [UInt8])? {
        let text = value.drop { $0 == " " || $0 == "\n" || $0 == "\r" || $0 == "\t" }
        guard text.hasPrefix("data:image/"), let comma = text.firstIndex(of: ","),
            text[..<comma].hasSuffix(";base64") else { return nil }
        let body = text[text.index(after: comma)...].utf8.filter { ![0x20, 0x0A, 0x0D, 0x09].contains($0) }
        guard let bytes = Base64.decode(body[...]) else { return nil }
        return (String(text[...comma]), bytes)
    }
}
