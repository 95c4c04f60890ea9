// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Metascrub
import MetascrubCore

/// A usage or policy error in the server's settings: said on stderr, exit 2 (the CLI's contract).
func runUsage<T>(_ body: () throws(MetascrubError) -> T) throws -> T {
    do {
        return try body()
    } catch {
        FileHandle.standardError.write(Data("metascrub serve: \(error.description)\n".utf8))
        throw ExitCode(ExitStatus.usage.rawValue)
    }
}
