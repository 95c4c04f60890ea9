// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Metascrub
import MetascrubCore
import Yams

/// The `serve:` section of `.metascrub.yaml`: the same settings as the command line, which wins.
///
/// ```yaml
/// schema: 1
/// policy: share
/// serve:
///   listen: 0.0.0.0:8480
///   metrics: 127.0.0.1:9480
///   max-bytes: 1G
///   workers: 4
///   queue: 32
///   timeout: 300
///   token-file: /run/secrets/metascrub-token
///   spool: /var/spool/metascrub
///   memory-spool: /run/metascrub/shm   # named: the server mounts no tmpfs of its own (docs/serve.md)
///   memory-spool-bytes: 64M
/// ```
public enum ServeConfigFile {
    static let keys = ["listen", "metrics", "max-bytes", "workers", "queue", "timeout", "token-file", "spool",
                       "upload-slots", "min-upload-rate", "upload-grace", "drain-grace", "memory-spool",
                       "memory-spool-bytes"]

    /// Applies the section of the config at `path` to `base`; a config without a `serve:` section changes nothing.
    public static func apply(path: String, to base: ServeConfiguration) throws(MetascrubError) -> ServeConfiguration {
        let workflow = try WorkflowConfig.load(path: path)
        var config = base
        if let policy = workflow.settings.policy { config.policy = policy }
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw .policy(file: path, line: nil, key: "serve", message: "cannot read the config file")
        }
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch {
            throw .policy(file: path, line: nil, key: "serve", message: "not valid YAML")
        }
        guard let section = root?.mapping?["serve"] else { return config }
        guard let mapping = section.mapping else { throw fail(path, section, "serve", "must be a mapping of settings") }
        for (keyNode, value) in mapping {
            guard let key = keyNode.string, keys.contains(key) else {
                throw fail(path, keyNode, keyNode.string, "unknown serve setting; expected one of \(keys.joined(separator: ", "))")
            }
            let string = value.string ?? ""
            switch key {
            case "listen", "metrics":
                guard let address = HostPort(parsing: string) else { throw fail(path, value, key, "must be HOST:PORT") }
                if key == "listen" { config.listen = address } else { config.metrics = address }
            case "max-bytes", "memory-spool-bytes":
                guard let bytes = ServeConfiguration.parseBytes(string) else { throw fail(path, value, key, "must be a size such as 512M") }
                if key == "max-bytes" { config.maxBytes = bytes } else { config.memorySpoolBytes = bytes }
            case "memory-spool":
                guard !string.isEmpty else { throw fail(path, value, key, "must be a folder") }
                config.memorySpoolParent = relativeTo(path, string)
            case "workers", "queue", "timeout", "upload-slots", "upload-grace", "drain-grace":
                guard let number = value.int, number >= 0 else { throw fail(path, value, key, "must be a whole number") }
                switch key {
                case "workers": config.workers = number
                case "queue": config.queue = number
                case "upload-slots": config.uploadSlots = number
                case "upload-grace": config.uploadGraceSeconds = number
                case "drain-grace": config.drainGraceSeconds = number
                default: config.timeoutSeconds = number
                }
            case "min-upload-rate":
                guard let rate = ServeConfiguration.parseBytes(string) else {
                    throw fail(path, value, key, "must be a size such as 16K")
                }
                config.minUploadRate = rate
            case "token-file":
                config.token = try ServeConfiguration.readToken(relativeTo(path, string))
            default:
                config.spoolParent = string
            }
        }
        return config
    }

    /// A path from the config file, relative to the file's folder unless absolute.
    private static func relativeTo(_ config: String, _ path: String) -> String {
        guard !path.hasPrefix("/") else { return path }
        return ((config as NSString).deletingLastPathComponent as NSString).appendingPathComponent(path)
    }

    private static func fail(_ path: String, _ node: Node, _ key: String?, _ message: String) -> MetascrubError {
        .policy(file: path, line: node.mark?.line, key: key.map { "serve.\($0)" }, message: message)
    }
}
