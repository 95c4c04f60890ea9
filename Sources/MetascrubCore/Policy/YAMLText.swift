// SPDX-License-Identifier: GPL-3.0-or-later
import Yams

/// The YAML parse both configuration files share (policies and the workflow config): a syntax error becomes a
/// `.policy` error naming the file, with the line and the wording each caller reads out of Yams' error.
public enum YAMLText {
    public static func compose(
        _ text: String, file: String, line: (YamlError) -> Int?, describe: (YamlError) -> String
    ) throws(MetascrubError) -> Node? {
        do {
            return try Yams.compose(yaml: text)
        } catch let error as YamlError {
            throw .policy(file: file, line: line(error), key: nil, message: "not valid YAML: \(describe(error))")
        } catch {
            throw .policy(file: file, line: nil, key: nil, message: "not valid YAML")
        }
    }
}
