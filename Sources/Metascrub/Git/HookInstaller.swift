// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import MetascrubCore
import MetascrubFormats

#if canImport(Glibc)
import Glibc
#endif

/// `hook install` / `hook uninstall`: a plain git pre-commit hook (no framework needed). The hook carries a
/// marker line so metascrub only ever replaces or removes hooks it wrote itself.
public struct HookInstaller: Sendable {
    public enum Mode: String, Sendable, CaseIterable {
        /// Block the commit when a staged file carries metadata the policy removes (`scan --staged`).
        case check
        /// Clean the staged files, re-stage them, and let the commit go on (`clean --staged`).
        case fix
    }

    public enum Outcome: Sendable, Equatable {
        case installed(path: String, backup: String?)
        case removed(path: String, restored: String?)
        case absent(path: String)
    }

    public static let marker = "# metascrub-hook: managed by `metascrub hook install`; `metascrub hook uninstall` removes it"
    static let backupSuffix = ".before-metascrub"

    let git: Git
    var fileSystem: any FileSystem

    public init(directory: String, fileSystem: any FileSystem = PosixFileSystem()) throws(MetascrubError) {
        git = Git(top: try Git.topLevel(from: directory))
        self.fileSystem = fileSystem
    }

    /// `.git/hooks/pre-commit`, or under `core.hooksPath` when set (git resolves both for us).
    public func hookPath() throws(MetascrubError) -> String {
        let dir = String(decoding: try git.run(["rev-parse", "--git-path", "hooks"]), as: UTF8.self)
            .trimmingCharacters(in: .newlines)
        return Paths.join(dir.hasPrefix("/") ? dir : Paths.join(git.top, dir), "pre-commit")
    }

    static func script(mode: Mode, binary: String) -> String {
        let command = mode == .check ? "scan --staged" : "clean --staged"
        return """
            #!/bin/sh
            \(marker)
            # mode: \(mode.rawValue)
            # The binary that installed this hook, or metascrub on PATH when it has moved.
            metascrub=\(shellQuoted(binary))
            [ -x "$metascrub" ] || metascrub=metascrub
            exec "$metascrub" \(command)

            """
    }

    /// Writes the hook. A hook metascrub did not write is kept unless `force`; then it is moved aside
    /// (`pre-commit.before-metascrub`) and put back by `uninstall`.
    public func install(mode: Mode, force: Bool, binary: String) throws(MetascrubError) -> Outcome {
        let path = try hookPath()
        var backup: String?
        if let existing = Self.contents(path), !existing.contains(Self.marker) {
            guard force else {
                throw .usage("\(path) exists and was not written by metascrub; not replacing it (use --force to move it aside to pre-commit\(Self.backupSuffix))")
            }
            backup = path + Self.backupSuffix
            try Self.typed { try fileSystem.rename(path, to: path + Self.backupSuffix) }
        }
        let bytes = Array(Self.script(mode: mode, binary: binary).utf8)
        try writeExecutable(bytes, to: path)
        return .installed(path: path, backup: backup)
    }

    public func uninstall() throws(MetascrubError) -> Outcome {
        let path = try hookPath()
        guard let existing = Self.contents(path) else { return .absent(path: path) }
        guard existing.contains(Self.marker) else {
            throw .usage("\(path) was not written by metascrub; leaving it alone")
        }
        fileSystem.unlink(path)
        let backup = path + Self.backupSuffix
        if Self.contents(backup) != nil {
            try Self.typed { try fileSystem.rename(backup, to: path) }
            return .removed(path: path, restored: path)
        }
        return .removed(path: path, restored: nil)
    }

    private func writeExecutable(_ bytes: [UInt8], to path: String) throws(MetascrubError) {
        let fs = fileSystem
        do {
            try AtomicWriter(fileSystem: fs).replace(path, createFolders: true, write: { sink in
                try sink.write(bytes)
            }, check: { temp in
                let fd = try fs.openForAttributes(temp)
                defer { fs.close(fd) }
                try fs.setMode(fd, mode: 0o755, path: temp)
            })
        } catch let error as MetascrubError {
            throw error
        } catch {
            throw .io(operation: "write", path: path, errno: EIO)
        }
    }

    /// A hook's text, or nil when there is none (a hook is a small script; a huge file is not ours anyway).
    static func contents(_ path: String) -> String? {
        guard let source = try? FileByteSource(path: path), let bytes = try? source.readAll(limit: 1 << 20) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The file-system protocol throws untyped errors; they are all MetascrubError in practice.
    private static func typed(_ body: () throws -> Void) throws(MetascrubError) {
        do { try body() } catch { throw FileProcessor.typed(error) }
    }

    static func shellQuoted(_ s: String) -> String {
        "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
