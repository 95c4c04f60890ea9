// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Metascrub

struct ScanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "List every metadata item and what the policy would do with it. Never writes.",
        discussion: "Exit status: 0 nothing the policy removes, 1 findings, 2 usage or policy error, 3 a file could not be read."
    )

    @Argument(help: "Files or folders (folders are walked recursively).")
    var paths: [String]

    @OptionGroup var options: ReportOptions

    func run() async throws {
        let engine = try runUsage { try options.engine() }
        let report = await engine.scan(paths)
        try runUsage { try options.emit(report) }
        throw exitStatusCode(ExitStatus.forScan(report))
    }
}
