// SPDX-License-Identifier: GPL-3.0-or-later
import Yams

/// The YAML parse both configuration files share (policies and the workflow config): a syntax error becomes a
/// `.policy` error naming the file, with the line and the wording each caller reads out of Yams' error.
public enum YAMLText {
    public static func compose(
        _ text: String, file: String, line: (YamlError) -> Int?, describe: (YamlError) -> String
    ) throws(MetascrubError) -> Node? {
        do {
            // No implicit tag resolution (`Resolver.basic`): every reader here takes a scalar's text through
            // `Node.string`/`.int`/`.bool`/`.float`, which parse it whatever its tag, and the default resolver compiled
            // seven regular expressions and matched every scalar against them: 2 ms of each run's start (issue 25,
            // round 3), more than the scan of a photo.
            return try Yams.compose(yaml: text, .basic)
        } catch let error as YamlError {
            throw .policy(file: file, line: line(error), key: nil, message: "not valid YAML: \(describe(error))")
        } catch {
            throw .policy(file: file, line: nil, key: nil, message: "not valid YAML")
        }
    }
}
