// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubFormats
import Yams

#if canImport(Glibc)
import Glibc
#endif

/// Settings a run takes from `.metascrub.yaml` and the command line. nil: not given here.
public struct WorkflowSettings: Sendable, Equatable {
    public var policy: String?
    public var include: [String]?
    public var exclude: [String]?
    public var jobs: Int?
    public var keepMtime: Bool?
    public var allowUncleaned: Bool?
    public var format: ReportFormat?

    public init(policy: String? = nil, include: [String]? = nil, exclude: [String]? = nil, jobs: Int? = nil,
                keepMtime: Bool? = nil, allowUncleaned: Bool? = nil, format: ReportFormat? = nil) {
        self.policy = policy
        self.include = include
        self.exclude = exclude
        self.jobs = jobs
        self.keepMtime = keepMtime
        self.allowUncleaned = allowUncleaned
        self.format = format
    }

    /// Command-line values win; a list given on the command line replaces the config's list.
    public func overridden(by cli: WorkflowSettings) -> WorkflowSettings {
        WorkflowSettings(
            policy: cli.policy ?? policy, include: cli.include ?? include, exclude: cli.exclude ?? exclude,
            jobs: cli.jobs ?? jobs, keepMtime: cli.keepMtime ?? keepMtime,
            allowUncleaned: cli.allowUncleaned ?? allowUncleaned, format: cli.format ?? format)
    }

    public var filter: PathFilter {
        PathFilter(include: (include ?? []).map(Glob.init), exclude: (exclude ?? []).map(Glob.init))
    }
}

/// `.metascrub.yaml`: per-project defaults, found by walking up from the working directory (like
/// .gitignore or .editorconfig), so a hook, a CI job and a person at the terminal all get the same settings.
///
/// ```yaml
/// schema: 1
/// policy: share              # a shipped name, or a policy file relative to this file
/// include: ["**/*.jpg"]
/// exclude: ["drafts/", "*.psd"]
/// jobs: 4
/// keep-mtime: true
/// allow-uncleaned: false
/// format: text               # text, json, sarif or brief
/// ```
public struct WorkflowConfig: Sendable, Equatable {
    public static let fileName = ".metascrub.yaml"
    public static let schemaVersion = 1
    // `serve:` is read by MetascrubServe (ServeConfigFile); the other commands accept and ignore it.
    static let keys = ["schema", "policy", "include", "exclude", "jobs", "keep-mtime", "allow-uncleaned", "format", "serve"]

    /// Where it was read from.
    public var path: String
    public var settings: WorkflowSettings

    /// The nearest `.metascrub.yaml` in `directory` or a folder above it, or nil.
    public static func discover(from directory: String) throws(MetascrubError) -> WorkflowConfig? {
        var dir = Paths.real(directory) ?? directory
        while true {
            let candidate = Paths.join(dir, fileName)
            var st = stat()
            if stat(candidate, &st) == 0, st.st_mode & S_IFMT == S_IFREG { return try load(path: candidate) }
            if dir == "/" || dir.isEmpty { return nil }
            dir = Paths.directory(of: dir)
        }
    }

    public static func load(path: String) throws(MetascrubError) -> WorkflowConfig {
        let text: String
        do {
            text = String(decoding: try FileByteSource(path: path).readAll(limit: 1 << 20), as: UTF8.self)
        } catch {
            throw .policy(file: path, line: nil, key: nil, message: "cannot read the config file")
        }
        return try parse(text, path: path)
    }

    public static func parse(_ text: String, path: String) throws(MetascrubError) -> WorkflowConfig {
        func fail(_ node: Node?, _ key: String?, _ message: String) -> MetascrubError {
            .policy(file: path, line: node?.mark?.line, key: key, message: message)
        }
        let root = try YAMLText.compose(text, file: path, line: Self.line(of:), describe: Self.describe)
        guard let root, let mapping = root.mapping else { throw fail(root, nil, "the config is a YAML mapping") }
        var fields: [String: (Node, Node)] = [:]
        for (keyNode, value) in mapping {
            guard let key = keyNode.string, keys.contains(key) else {
                throw fail(keyNode, keyNode.string, "unknown setting; expected one of \(keys.joined(separator: ", "))")
            }
            guard fields[key] == nil else { throw fail(keyNode, key, "given twice") }
            fields[key] = (keyNode, value)
        }
        guard let (_, schemaNode) = fields["schema"] else {
            throw fail(root, "schema", "missing; write `schema: \(schemaVersion)` at the top")
        }
        guard schemaNode.int == schemaVersion else {
            throw fail(schemaNode, "schema", "version \(schemaNode.string ?? "?") is not supported; this metascrub reads version \(schemaVersion)")
        }
        var settings = WorkflowSettings()
        if let (_, node) = fields["policy"] {
            guard let name = node.string, !name.isEmpty else { throw fail(node, "policy", "must be a policy name or file") }
            // A policy file is relative to the config, not to wherever the command happens to run.
            settings.policy = name.contains("/") || name.hasSuffix(".yaml") || name.hasSuffix(".yml")
                ? (name.hasPrefix("/") ? name : Paths.join(Paths.directory(of: path), name)) : name
        }
        for key in ["include", "exclude"] {
            guard let (_, node) = fields[key] else { continue }
            let list: [String]
            if let one = node.string, node.scalar != nil {
                list = [one]
            } else if let items = node.sequence {
                list = try items.map { item throws(MetascrubError) in
                    guard let text = item.string, item.scalar != nil, !text.isEmpty else { throw fail(item, key, "each pattern must be text") }
                    return text
                }
            } else {
                throw fail(node, key, "must be a glob pattern or a list of them")
            }
            if key == "include" { settings.include = list } else { settings.exclude = list }
        }
        if let (_, node) = fields["jobs"] {
            guard let jobs = node.int, jobs >= 1 else { throw fail(node, "jobs", "must be a whole number of at least 1") }
            settings.jobs = jobs
        }
        if let (_, node) = fields["keep-mtime"] {
            guard let value = node.bool else { throw fail(node, "keep-mtime", "must be true or false") }
            settings.keepMtime = value
        }
        if let (_, node) = fields["allow-uncleaned"] {
            guard let value = node.bool else { throw fail(node, "allow-uncleaned", "must be true or false") }
            settings.allowUncleaned = value
        }
        if let (_, node) = fields["format"] {
            guard let text = node.string, let format = ReportFormat(rawValue: text) else {
                throw fail(node, "format", "must be one of \(ReportFormat.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            settings.format = format
        }
        return WorkflowConfig(path: path, settings: settings)
    }

    private static func line(of error: YamlError) -> Int? {
        switch error {
        case .scanner(_, _, let mark, _), .parser(_, _, let mark, _), .composer(_, _, let mark, _): mark.line
        case .duplicatedKeysInMapping(_, let context): context.mark.line
        default: nil
        }
    }

    private static func describe(_ error: YamlError) -> String {
        switch error {
        case .scanner(_, let problem, _, _), .parser(_, let problem, _, _), .composer(_, let problem, _, _): problem
        case .duplicatedKeysInMapping(let keys, _): "a setting is given twice (\(keys.joined(separator: ", ")))"
        default: "syntax error"
        }
    }
}
