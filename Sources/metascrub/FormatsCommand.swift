// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Metascrub
import MetascrubFormats

struct FormatsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "formats",
        abstract: "Print the format table: what is recognised, scanned and removed per format."
    )

    @Flag(name: .long, help: "Print the file-name pattern (a regular expression) the pre-commit hooks use: the extensions of every format above.")
    var hookPattern = false

    func run() throws {
        if hookPattern {
            print(HookFilePattern.regex)
            return
        }
        let families = MetadataFamily.allCases
        var rows = [["format", "id", "clean"] + families.map(\.rawValue)]
        for entry in FormatRegistry.entries {
            rows.append([entry.format.name, entry.format.id, entry.handler == nil ? "no" : "yes"] + families.map { entry.capabilities[$0].rawValue })
        }
        let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            print(zip(row, widths).map { $0.0.padding(toLength: $0.1, withPad: " ", startingAt: 0) }.joined(separator: "  "))
        }
        print("\nRW: found and removed   R: found and reported   -: not handled")
        print("\n\(FormatRegistry.generalPathSummary)\n")
        for entry in FormatRegistry.entries where entry.handler == nil {
            print("\(entry.format.id): \(entry.unsupportedReason ?? "")")
        }
    }
}
