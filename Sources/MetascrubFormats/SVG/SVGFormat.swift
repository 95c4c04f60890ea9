// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// SVG: the document re-parsed, the removed nodes and attributes taken out of libxml2's tree, images in `data:`
/// URIs replaced by their cleaned bytes in base64, and the tree written back by libxml2. A file with nothing to
/// remove is copied as it is. The verifier compares the rendering projection of both documents (`SVGProjection`).
public struct SVGFormat: FormatHandler {
    public init() {}

    public func scan(_ input: any ByteSource, options: ScanOptions) throws -> ScanResult<SVGLayout> {
        try SVGScanner.scan(input, options: options)
    }

    public func clean(_ input: any ByteSource, scan: ScanResult<SVGLayout>, plan: CleanPlan,
        to output: any OutputSink) throws -> CleanResult {
        let layout = scan.layout
        let result = CleanResult(method: .remux)
        let cleanedImages = try scan.cleanedEmbeddedFiles(plan)
        let dropped = layout.targets.filter { !plan.keeps($0.key) }.flatMap(\.value)
        var images: [(SVGLayout.Image, [UInt8]?)] = []
        for (item, image) in layout.images {
            if let bytes = cleanedImages[item] {
                images.append((image, bytes))
            } else if !plan.keeps(item) {
                images.append((image, nil))
            }
        }
        // Images in CSS: per attribute or text node, the new body of each image that changes (empty when removed).
        var styles: [[Int]: [Int: [UInt8]]] = [:]
        for (item, image) in layout.styleImages {
            let key = [image.node, image.attribute ?? -1]
            if let bytes = cleanedImages[item] {
                styles[key, default: [:]][image.index] = bytes
            } else if !plan.keeps(item) {
                styles[key, default: [:]][image.index] = []
            }
        }
        guard !dropped.isEmpty || !images.isEmpty || !styles.isEmpty else {
            try output.copy(from: input, offset: 0, count: input.size)
            return result
        }
        let document = try SVGDocument(try input.read(at: 0, count: Int(input.size), format: "SVG", path: "document"))
        // Node and attribute numbers were given at parse time and survive the edits; a removed node stays allocated
        // until the document is freed, so one inside another removed node is never freed twice.
        for (image, bytes) in images {
            if let bytes {
                try document.setAttribute(image.node, image.attribute,
                    to: Array(image.header.utf8) + Base64.encode(bytes))
            } else {
                document.removeAttribute(image.node, image.attribute)
            }
        }
        for (key, replacements) in styles {
            if key[1] >= 0 {
                let text = Array(document.attributeText(key[0], key[1]).utf8)
                try document.setAttribute(key[0], key[1], to: SVGDataImages.replacing(text, replacements))
            } else {
                try document.setContent(key[0], to: SVGDataImages.replacing(Array(document.content(key[0]).utf8),
                    replacements))
            }
        }
        for target in dropped {
            switch target {
            case .attribute(let node, let index): document.removeAttribute(node, index)
            case .node(let node): try document.removeNode(node)
            }
        }
        try document.dropUnusedNamespaces()
        try output.write(try document.serialised())
        return result
    }

    public func verifyContent(original: any ByteSource, _ before: SVGLayout, cleaned: any ByteSource,
        _ after: SVGLayout,
                              result: CleanResult) throws -> ContentCheck {
        let method = "SVG rendering projection (SVG elements, attributes, text, entity references, style sheets) "
            + "identical"
        guard before.projection == after.projection else {
            let at = zip(before.projection,
                after.projection).enumerated().first { $0.element.0 != $0.element.1 }?.offset
                ?? min(before.projection.count, after.projection.count)
            return ContentCheck(method: method, passed: false, detail: "the rendering projection differs at byte \(at)")
        }
        return ContentCheck(method: method, passed: true)
    }
}
