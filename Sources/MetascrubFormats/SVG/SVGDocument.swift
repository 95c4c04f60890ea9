// SPDX-License-Identifier: GPL-3.0-or-later
import CSVGXML
import MetascrubCore

/// An SVG file parsed by libxml2 (`CSVGXML`), held for one scan or one clean. SVG is hostile input: no network, no
/// external DTD or entity loaded, no entity substituted, no XInclude, libxml2's size and depth limits on (no HUGE).
/// Scan and clean number the nodes the same way (document order over the same bytes), so a layout can name them.
final class SVGDocument {
    enum NodeType: Int32 {
        case element = 1, text = 3, cdata = 4, entityReference = 5, processingInstruction = 7, comment = 8, doctype = 14
        case other = 0
    }

    private let doc: OpaquePointer
    let count: Int

    static let sizeLimit = 64 << 20

    init(_ bytes: [UInt8]) throws {
        guard bytes.count <= Self.sizeLimit else {
            throw MetascrubError.limitExceeded(format: "SVG", path: "document", offset: 0,
                limit: "\(Self.sizeLimit) bytes of XML")
        }
        var message = [CChar](repeating: 0, count: 256)
        var line: Int32 = 0
        let parsed = bytes.withUnsafeBufferPointer { msx_parse($0.baseAddress, bytes.count, &message, message.count,
            &line) }
        guard let parsed else {
            let text = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw MetascrubError.malformed(format: "SVG", path: "line \(line)", offset: 0,
                                           reason: text.split(separator: "\n").first.map(String.init)
                                               ?? "not well-formed XML")
        }
        doc = parsed
        count = msx_node_count(parsed)
    }

    deinit { msx_free(doc) }

    var nodes: Range<Int> { 0..<count }
    func type(_ i: Int) -> NodeType { NodeType(rawValue: msx_node_type(doc, i)) ?? .other }
    func parent(_ i: Int) -> Int? { let p = msx_node_parent(doc, i); return p < 0 ? nil : Int(p) }
    func name(_ i: Int) -> String { String(cString: msx_node_name(doc, i)) }
    func namespace(_ i: Int) -> String? { msx_node_namespace(doc, i).map { String(cString: $0) } }
    func prefix(_ i: Int) -> String? { msx_node_prefix(doc, i).map { String(cString: $0) } }
    /// A comment's or text node's content, an element's whole text content (entity references never expanded).
    func content(_ i: Int) -> String { Self.take(msx_node_content(doc, i)) }

    /// The root element (the first element at top level).
    var root: Int? { nodes.first { parent($0) == nil && type($0) == .element } }

    struct Attribute {
        var name: String
        var namespace: String?
        var prefix: String?
        var value: String
    }

    /// An element's attributes in order (namespace declarations are not attributes in libxml2).
    func attributes(_ i: Int) -> [Attribute] {
        (0..<msx_attribute_count(doc, i)).map { a in
            Attribute(name: String(cString: msx_attribute_name(doc, i, a)),
                      namespace: msx_attribute_namespace(doc, i, a).map { String(cString: $0) },
                      prefix: msx_attribute_prefix(doc, i, a).map { String(cString: $0) },
                      value: Self.take(msx_attribute_value(doc, i, a)))
        }
    }

    func setAttribute(_ i: Int, _ a: Int, to value: [UInt8]) throws {
        let status = (value + [0]).withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { msx_set_attribute_value(doc, i, a, $0.baseAddress) }
        }
        guard status == 0 else { throw failure("could not set attribute \(a) of node \(i)") }
    }

    /// An attribute's value with its references replaced, as CSS and URL parsers read it.
    func attributeText(_ i: Int, _ a: Int) -> String { Self.take(msx_attribute_text(doc, i, a)) }

    func setContent(_ i: Int, to value: [UInt8]) throws {
        let status = (value + [0]).withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { msx_set_node_content(doc, i, $0.baseAddress) }
        }
        guard status == 0 else { throw failure("could not set the text of node \(i)") }
    }

    func removeAttribute(_ i: Int, _ a: Int) { _ = msx_remove_attribute(doc, i, a) }

    func removeNode(_ i: Int) throws {
        guard msx_remove_node(doc, i) == 0 else { throw failure("could not remove node \(i)") }
    }

    /// Declarations of namespaces nothing uses any more (an editor's, once its attributes are gone) are dropped.
    func dropUnusedNamespaces() throws {
        guard msx_drop_unused_namespaces(doc) == 0 else { throw failure("out of memory") }
    }

    /// The document as libxml2 writes it (UTF-8, no reformatting).
    func serialised() throws -> [UInt8] {
        var size = 0
        guard let memory = msx_serialise(doc,
            &size) else { throw failure("libxml2 could not write the cleaned document") }
        defer { msx_string_free(memory) }
        return Array(UnsafeBufferPointer(start: memory, count: size))
    }

    private func failure(_ reason: String) -> MetascrubError {
        .malformed(format: "SVG", path: "document", offset: 0, reason: reason)
    }

    private static func take(_ text: UnsafeMutablePointer<CChar>?) -> String {
        guard let text else { return "" }
        defer { msx_string_free(text) }
        return String(cString: text)
    }
}
