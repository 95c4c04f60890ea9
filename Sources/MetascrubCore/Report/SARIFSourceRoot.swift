// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// What SARIF result URIs are relative to. Code scanning (GitHub, GitLab) resolves `%SRCROOT%` to the checkout,
/// so a path must be relative to the repository root, not to the folder the scan happened to run in
/// (`cd site && metascrub scan .` must still name `site/img/a.jpg`). The root itself is never written: an
/// absolute path would put the user's home folder in a report meant to be uploaded.
public struct SARIFSourceRoot: Sendable, Equatable {
    /// The repository root (canonical), or nil: paths are then relative to the working folder, as given.
    public var root: String?
    /// The folder relative input paths are relative to (canonical).
    public var workingDirectory: String

    public init(root: String?, workingDirectory: String) {
        self.root = root
        self.workingDirectory = workingDirectory
    }

    /// The nearest folder at or above the working folder that holds `.git` (a folder, or a worktree's file).
    public static func discover(from directory: String = FileManager.default.currentDirectoryPath) -> SARIFSourceRoot {
        let cwd = (directory as NSString).resolvingSymlinksInPath
        var folder = cwd
        while true {
            if FileManager.default.fileExists(atPath: (folder as NSString).appendingPathComponent(".git")) {
                return SARIFSourceRoot(root: folder, workingDirectory: cwd)
            }
            let parent = (folder as NSString).deletingLastPathComponent
            if parent == folder || parent.isEmpty { return SARIFSourceRoot(root: nil, workingDirectory: cwd) }
            folder = parent
        }
    }

    /// The report's path as a URI: relative to the root when the file is inside it, else as before (relative
    /// paths relative to the working folder, absolute ones as `file://` URIs).
    func uri(_ path: String) -> String {
        guard let root, path != "-" else { return SARIFReportRenderer.uri(path) }
        let absolute = Self.normalised(path.hasPrefix("/") ? path : workingDirectory + "/" + path)
        let prefix = root.hasSuffix("/") ? root : root + "/"
        guard absolute.hasPrefix(prefix) else { return SARIFReportRenderer.uri(path.hasPrefix("/") ? path : absolute) }
        return SARIFReportRenderer.uri(String(absolute.dropFirst(prefix.count)))
    }

    /// `.` and `..` components and doubled slashes resolved lexically.
    static func normalised(_ path: String) -> String {
        var parts: [Substring] = []
        for part in path.split(separator: "/", omittingEmptySubsequences: true) {
            if part == "." { continue }
            if part == ".." { _ = parts.popLast(); continue }
            parts.append(part)
        }
        return "/" + parts.joined(separator: "/")
    }
}
