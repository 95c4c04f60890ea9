// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Glibc

/// `metascrub serve`: execs the metascrub-serve binary installed beside this one, with the same arguments. The
/// HTTP server lives there so that this binary, which parses hostile files (and is what every worker runs), links
/// no socket code and starts without loading SwiftNIO.
struct ServeLauncher: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the HTTP scrubbing service: each uploaded file is cleaned and verified in a sandboxed worker process.",
        discussion: """
            Runs metascrub-serve, installed beside metascrub, with these arguments; `metascrub serve --help` lists \
            its options (metascrub(1), SERVE; docs/serve.md).
            """
    )

    @Argument(parsing: .allUnrecognized, help: ArgumentHelp("metascrub-serve's options.", valueName: "option"))
    var arguments: [String] = []

    /// The server binary beside the running one.
    static var serverPath: String {
        let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return (me as NSString).deletingLastPathComponent + "/metascrub-serve"
    }

    func run() throws { try Self.exec(arguments) }

    /// Replaces this process with metascrub-serve; returns only by throwing when that is impossible.
    static func exec(_ arguments: [String]) throws -> Never {
        let path = Self.serverPath
        let argv = [path] + arguments
        var cArgs = argv.map { strdup($0) } + [nil]
        execv(path, &cArgs)
        // Only reached when the exec failed.
        let reason = String(cString: strerror(errno))
        FileHandle.standardError.write(Data("metascrub: cannot run \(path) (\(reason)): metascrub serve needs the metascrub-serve binary installed beside metascrub\n".utf8))
        throw ExitCode(2)
    }
}
