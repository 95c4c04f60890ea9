// SPDX-License-Identifier: GPL-3.0-or-later
import Yams

/// Reads a policy from YAML, validating every key and value with errors that name file, line and key.
public enum PolicyLoader {
    static let topLevelKeys: Set<String> = [
        "schema", "name", "description", "default", "unknown", "categories", "keys", "orientation", "reencode",
        "convert", "min-psnr", "damaged", "unwalked", "uncleanable", "max-pixels",
        "provenance",
    ]

    public static func load(yaml text: String, file: String) throws(MetascrubError) -> Policy {
        let node = try YAMLText.compose(text, file: file, line: Self.line(of:), describe: Self.describe)
        guard let root = node, let mapping = root.mapping else {
            throw .policy(file: file, line: node?.mark?.line, key: nil, message: "a policy is a YAML mapping")
        }
        func fail(_ node: Node, _ key: String?, _ message: String) -> MetascrubError {
            .policy(file: file, line: node.mark?.line, key: key, message: message)
        }
        var fields: [String: (Node, Node)] = [:]
        for (keyNode, valueNode) in mapping {
            guard let key = keyNode.string else { throw fail(keyNode, nil, "keys must be strings") }
            guard topLevelKeys.contains(key) else {
                throw fail(keyNode, key, "unknown setting; expected one of \(topLevelKeys.sorted().joined(separator: ", "))")
            }
            guard fields[key] == nil else { throw fail(keyNode, key, "given twice") }
            fields[key] = (keyNode, valueNode)
        }
        guard let (schemaKey, schemaNode) = fields["schema"] else {
            throw fail(root, "schema", "missing; write `schema: \(Policy.schemaVersion)` at the top")
        }
        guard let schema = schemaNode.int else { throw fail(schemaNode, "schema", "must be a whole number") }
        guard schema == Policy.schemaVersion else {
            throw fail(schemaKey, "schema", "version \(schema) is not supported; this metascrub reads version \(Policy.schemaVersion)")
        }
        guard let (_, nameNode) = fields["name"], let name = nameNode.string, !name.isEmpty else {
            throw fail(root, "name", "missing; every policy needs a name")
        }
        var policy = Policy(name: name, digest: SHA256.hex(Array(text.utf8)))
        if let (_, node) = fields["description"] {
            guard let text = node.string else { throw fail(node, "description", "must be text") }
            policy.description = text
        }
        if let (_, node) = fields["default"] { policy.fallback = try disposition(node, "default", fail) }
        if let (_, node) = fields["unknown"] { policy.unknown = try disposition(node, "unknown", fail) }
        if let (_, node) = fields["orientation"] {
            guard let text = node.string, let mode = Policy.OrientationMode(rawValue: text) else {
                throw fail(node, "orientation", "must be one of \(Policy.OrientationMode.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            policy.orientation = mode
        }
        if let (_, node) = fields["reencode"] {
            guard let value = node.bool else { throw fail(node, "reencode", "must be true or false") }
            policy.allowReencode = value
        }
        if let (_, node) = fields["damaged"] {
            guard let text = node.string, let mode = Policy.DamagedMode(rawValue: text) else {
                throw fail(node, "damaged", "must be one of \(Policy.DamagedMode.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            policy.damaged = mode
        }
        if let (_, node) = fields["unwalked"] {
            guard let text = node.string, let mode = Policy.UnwalkedMode(rawValue: text) else {
                throw fail(node, "unwalked", "must be one of \(Policy.UnwalkedMode.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            policy.unwalked = mode
        }
        if let (_, node) = fields["provenance"] {
            guard let text = node.string, let mode = Policy.ProvenanceMode(rawValue: text) else {
                throw fail(node, "provenance", "must be one of \(Policy.ProvenanceMode.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            policy.provenance = mode
        }
        if let (_, node) = fields["uncleanable"] {
            guard let text = node.string, let value = Disposition(rawValue: text), value == .remove || value == .fail else {
                throw fail(node, "uncleanable", "must be remove or fail: what becomes of an embedded file to clean that metascrub cannot clean")
            }
            policy.uncleanable = value
        }
        if let (_, node) = fields["convert"] {
            guard let text = node.string, text == "none" || ConversionTarget(rawValue: text) != nil else {
                throw fail(node, "convert", "must be none, \(ConversionTarget.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            policy.convert = ConversionTarget(rawValue: text)
            if policy.convert != nil, !policy.allowReencode {
                throw fail(node, "convert", "converting re-encodes the image: it needs `reencode: true` in the same policy")
            }
        }
        if let (_, node) = fields["min-psnr"] {
            guard let value = node.float ?? node.int.map(Double.init), value.isFinite, value > 0, value <= 100 else {
                throw fail(node, "min-psnr", "must be a number of decibels between 0 and 100, e.g. 40")
            }
            policy.minimumPSNR = value
        }
        if let (_, node) = fields["max-pixels"] {
            guard let value = node.int, value >= 1 else {
                throw fail(node, "max-pixels", "must be a whole number of pixels, e.g. 100000000 (100 MP)")
            }
            policy.maxPixels = value
        }
        if let (_, node) = fields["categories"] {
            guard let map = node.mapping else { throw fail(node, "categories", "must map category names to keep, remove or fail") }
            for (keyNode, valueNode) in map {
                guard let text = keyNode.string, let category = Category(rawValue: text) else {
                    throw fail(keyNode, "categories.\(keyNode.string ?? "?")",
                               "unknown category; expected one of \(Category.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                guard policy.categories[category] == nil else { throw fail(keyNode, "categories.\(text)", "given twice") }
                policy.categories[category] = try disposition(valueNode, "categories.\(text)", fail, allowsClean: category == .embedded)
            }
        }
        if let (_, node) = fields["keys"] {
            guard let map = node.mapping else { throw fail(node, "keys", "must map metadata keys or patterns to keep, remove or fail") }
            for (keyNode, valueNode) in map {
                guard let text = keyNode.string, text.contains(":") || text == "*" else {
                    throw fail(keyNode, "keys.\(keyNode.string ?? "?")",
                               "a key is namespaced, e.g. exif:GPSLatitude, xmp:dc:rights, iptc:CopyrightNotice, jpeg:trailer")
                }
                let pattern = KeyPattern(text)
                guard policy.keys[pattern] == nil else { throw fail(keyNode, "keys.\(text)", "given twice") }
                policy.keys[pattern] = try disposition(valueNode, "keys.\(text)", fail, allowsClean: true)
            }
        }
        return policy
    }

    /// `clean` only means something for embedded files: it is accepted for the `embedded` category and for keys
    /// (which name them, e.g. `id3:APIC`), not as `default` or `unknown`.
    private static func disposition(
        _ node: Node, _ key: String, _ fail: (Node, String?, String) -> MetascrubError, allowsClean: Bool = false
    ) throws(MetascrubError) -> Disposition {
        guard let text = node.string, let value = Disposition(rawValue: text), value != .bake, allowsClean || value != .clean else {
            if node.string == Disposition.clean.rawValue {
                throw fail(node, key, "clean applies to embedded files only: use it under categories.embedded or for a key; here it must be keep, remove or fail")
            }
            throw fail(node, key, allowsClean ? "must be keep, remove, fail or clean" : "must be keep, remove or fail")
        }
        return value
    }

    private static func line(of error: YamlError) -> Int? {
        switch error {
        case .scanner(_, _, let mark, _), .parser(_, _, let mark, _), .composer(_, _, let mark, _):
            return mark.line
        case .duplicatedKeysInMapping(_, let context):
            return context.mark.line
        default:
            return nil
        }
    }

    private static func describe(_ error: YamlError) -> String {
        switch error {
        case .scanner(_, let problem, let mark, _), .parser(_, let problem, let mark, _), .composer(_, let problem, let mark, _):
            return "\(problem) (column \(mark.column))"
        case .duplicatedKeysInMapping(let keys, let context):
            // One line, not Yams' dump of the whole mapping.
            let names = keys.map { "'\($0)'" }.joined(separator: ", ")
            return "\(names) given twice in the mapping that starts at column \(context.mark.column)"
        default:
            return "\(error)"
        }
    }
}
