// SPDX-License-Identifier: GPL-3.0-or-later

/// Finds a policy by shipped name or by file path.
public enum PolicyCatalog {
    public static var names: [String] { BuiltinPolicies.sources.map(\.name) }

    public static func builtin(_ name: String) throws(MetascrubError) -> Policy {
        guard let source = BuiltinPolicies.sources.first(where: { $0.name == name }) else {
            throw .policy(file: name, line: nil, key: nil,
                          message: "no such policy; shipped policies are \(names.joined(separator: ", ")), or give a path to a YAML file")
        }
        return try PolicyLoader.load(yaml: source.yaml + "\n", file: "builtin:\(name)")
    }

    public static func source(of name: String) -> String? {
        BuiltinPolicies.sources.first(where: { $0.name == name }).map { $0.yaml + "\n" }
    }
}
