// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import MetascrubCore

/// Runs git as a child process (plumbing commands only, whose output is stable across versions). Paths are
/// passed literally (GIT_LITERAL_PATHSPECS), so a file named `*.jpg` or `:(glob)x` means that file.
/// GIT_INDEX_FILE and friends are inherited on purpose: inside a hook they name the index being committed.
struct Git: Sendable {
    /// The working-tree top folder; every command runs there and every path is relative to it.
    var top: String

    static func topLevel(from directory: String) throws(MetascrubError) -> String {
        let out = try Git(top: directory).run(["rev-parse", "--show-toplevel"])
        let path = String(decoding: out, as: UTF8.self).trimmingCharacters(in: .newlines)
        guard !path.isEmpty else { throw .usage("not inside a git working tree") }
        return path
    }

    func run(_ arguments: [String], input: [UInt8]? = nil) throws(MetascrubError) -> [UInt8] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["git"] + arguments
        process.currentDirectoryURL = URL(fileURLWithPath: top)
        process.environment = ProcessInfo.processInfo.environment.merging(["GIT_LITERAL_PATHSPECS": "1"]) { $1 }
        let out = Pipe(), err = Pipe(), inp = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input == nil ? FileHandle.nullDevice : inp
        do { try process.run() } catch { throw .usage("cannot run git (is it installed?)") }
        // Drain stderr on the side so a chatty git never blocks on a full pipe while we read stdout.
        let errorText = ErrorCollector(err.fileHandleForReading)
        if let input {
            let writer = inp.fileHandleForWriting
            let bytes = Data(input)
            Thread.detachNewThread {
                writer.write(bytes)
                try? writer.close()
            }
        }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let message = errorText.text.split(separator: "\n").first.map(String.init) ?? "exit \(process.terminationStatus)"
            throw .usage("git \(arguments.first ?? ""): \(message)")
        }
        return [UInt8](data)
    }

    /// NUL-separated output as strings (file names may contain anything but NUL).
    func list(_ arguments: [String]) throws(MetascrubError) -> [String] {
        try run(arguments).split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
    }
}

/// Reads a pipe to its end on a background thread.
private final class ErrorCollector: Sendable {
    private let data = Mutex(Data())
    private let done = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            let all = handle.readDataToEndOfFile()
            data.withLock { $0 = all }
            done.signal()
        }
    }

    var text: String {
        done.wait()
        return data.withLock { String(decoding: $0, as: UTF8.self) }
    }
}
