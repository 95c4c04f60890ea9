// SPDX-License-Identifier: GPL-3.0-or-later
/// What of an SVG decides how it renders: every element that is not an item, with its namespace, name, depth
/// and attributes in order, the text between them (adjacent runs joined, as they are once a comment between them
/// is gone), entity references, style-sheet instructions and the doctype. Images in `data:` URIs are items
/// (embedded files): their content is proven by their own handler when they are cleaned, so their base64 bodies
/// are left out here (an `<image>`'s whole `href`, the body only inside CSS). A clean must leave this
/// byte for byte the same; `rsvg-convert` renders in the tests are the independent check.
enum SVGProjection {
    static func of(_ document: SVGDocument, skipping removed: Set<Int>, attributes: Set<[Int]>,
        images: Set<[Int]>) -> [UInt8] {
        var out: [UInt8] = []
        var depth: [Int] = []
        var text: [UInt8] = []
        var textParent: Int?
        func emit(_ tag: String, _ parts: String...) {
            out += Array(tag.utf8)
            for part in parts { out += Array(part.utf8) + [0] }
            out.append(0x0A)
        }
        func flush() {
            if !text.isEmpty { out += Array("T\(textParent.map { depth[$0] } ?? -1) ".utf8) + text + [0x0A] }
            text = []
        }
        for i in document.nodes {
            let parent = document.parent(i)
            depth.append(parent.map { depth[$0] + 1 } ?? 0)
            guard !removed.contains(i) else { continue }
            switch document.type(i) {
            case .text, .cdata:
                if parent != textParent { flush() }
                textParent = parent
                text += Array(SVGDataImages.stripped(document.content(i)).utf8)
                continue
            default:
                flush()
                textParent = nil
            }
            switch document.type(i) {
            case .element:
                emit("E\(depth[i]) ", document.namespace(i) ?? "", document.name(i))
                for (a, attribute) in document.attributes(i).enumerated() where !attributes.contains([i,
                    a]) && !images.contains([i, a]) {
                    emit("A ", attribute.namespace ?? "", attribute.name, SVGDataImages.stripped(attribute.value))
                }
            case .entityReference: emit("R ", document.name(i))
            case .processingInstruction: emit("P ", document.name(i), document.content(i))
            case .doctype: emit("D ", document.name(i))
            default: emit("N\(document.type(i).rawValue) ", document.content(i))
            }
        }
        flush()
        return out
    }
}
