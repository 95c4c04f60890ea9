// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import MetascrubCore
import MetascrubFormats

/// What a command line turns into before any file is touched: the settings (command line over
/// `.metascrub.yaml` over the defaults), the policy they name and the engine's options. Here rather than in
/// the executable so that it is tested as a library; the CLI only parses flags and prints.
public enum RunSetup {
    /// Where settings come from besides the command line.
    public enum ConfigSource: Sendable, Equatable {
        /// The nearest `.metascrub.yaml` at or above this folder.
        case discover(from: String)
        /// This file.
        case file(String)
        /// No config file at all (`--no-config`).
        case none
    }

    /// The command line's settings over the config file's.
    public static func settings(_ cli: WorkflowSettings, config: ConfigSource) throws(MetascrubError) -> WorkflowSettings {
        let file: WorkflowConfig?
        switch config {
        case .none: return cli
        case .file(let path): file = try WorkflowConfig.load(path: path)
        case .discover(let folder): file = try WorkflowConfig.discover(from: folder)
        }
        return (file?.settings ?? WorkflowSettings()).overridden(by: cli)
    }

    /// A shipped policy by name, or a policy file.
    public static func policy(_ name: String) throws(MetascrubError) -> Policy {
        if PolicyCatalog.names.contains(name) { return try PolicyCatalog.builtin(name) }
        guard FileManager.default.fileExists(atPath: name) else {
            throw .policy(file: name, line: nil, key: nil,
                          message: "no such shipped policy or file; shipped: \(PolicyCatalog.names.joined(separator: ", "))")
        }
        guard let text = try? String(contentsOfFile: name, encoding: .utf8) else { throw .usage("cannot read policy \(name)") }
        return try PolicyLoader.load(yaml: text, file: name)
    }

    /// The engine a run uses. `reportFile` is the `--report` path: digests are computed only when a JSON
    /// report will show them (hashing both sides costs more than the rest of a JPEG clean).
    public static func engine(_ settings: WorkflowSettings, showValues: Bool, layout: LayoutOptions = LayoutOptions(),
                              reportFile: String? = nil, refuseDamaged: Bool = false) throws(MetascrubError) -> Engine {
        let jobs = settings.jobs ?? Engine.defaultJobs
        guard jobs >= 1 else { throw .usage("--jobs must be at least 1") }
        var options = ProcessingOptions(
            policy: try policy(settings.policy ?? BuiltinPolicies.defaultName), showValues: showValues,
            keepModificationTime: settings.keepMtime ?? false, allowUncleaned: settings.allowUncleaned ?? false)
        options.layout = layout
        if refuseDamaged { options.policy.damaged = .refuse }
        options.digests = settings.format == .json || reportFile?.hasSuffix(".json") == true
        return Engine(options: options, jobs: jobs)
    }
}
