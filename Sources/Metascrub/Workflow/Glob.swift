// SPDX-License-Identifier: GPL-3.0-or-later

#if canImport(Glibc)
import Glibc
#endif

/// An `--include`/`--exclude` pattern, matched against a path relative to the input root (folders are
/// separated by `/`). The rules follow .gitignore, which is what people already write:
/// - a pattern without `/` matches the file or folder name at any depth (`*.psd`, `drafts`);
/// - a pattern with `/` is anchored at the input root (`site/img/*.jpg`; a leading `/` is allowed);
/// - matching ignores case (`*.heic` matches `IMG_1.HEIC`);
/// - `*`, `?` and `[…]` never cross a `/`; `**` as a whole component matches any number of folders,
///   including none (`**/raw/*`, `drafts/**`); a trailing `/` is the same as `/**`.
public struct Glob: Sendable, Hashable, CustomStringConvertible {
    public let pattern: String
    private let components: [String]
    private let anchored: Bool

    public init(_ pattern: String) {
        self.pattern = pattern
        var text = pattern
        if text.hasSuffix("/") { text += "**" }
        anchored = text.dropLast(text.hasSuffix("/**") ? 3 : 0).contains("/")
        if text.hasPrefix("/") { text.removeFirst() }
        var parts = text.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        // Collapse runs of `**` so matching stays linear in practice.
        parts = parts.enumerated().filter { $0.offset == 0 || !($0.element == "**" && parts[$0.offset - 1] == "**") }.map(\.element)
        components = parts
    }

    public var description: String { pattern }

    /// Whether the relative path (`a/b/c.jpg`) matches.
    public func matches(_ relativePath: String) -> Bool {
        let path = relativePath.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        if anchored { return Self.match(components[...], path[...]) }
        // Unanchored: the name may sit at any depth, and `name/**` covers what is below it.
        for start in path.indices where Self.match(components[...], path[start...]) { return true }
        return false
    }

    private static func match(_ pattern: ArraySlice<String>, _ path: ArraySlice<String>) -> Bool {
        guard let head = pattern.first else { return path.isEmpty }
        if head == "**" {
            let rest = pattern.dropFirst()
            var tail = path
            while true {
                if match(rest, tail) { return true }
                guard !tail.isEmpty else { return false }
                tail = tail.dropFirst()
            }
        }
        guard let name = path.first, component(head, name) else { return false }
        return match(pattern.dropFirst(), path.dropFirst())
    }

    /// One path component against one pattern component, with libc's fnmatch (`*`, `?`, `[…]`, `\`), ignoring
    /// case: cameras and phones write `IMG_0001.HEIC` and `DSC_0001.JPG`, and `*.heic` must not miss them.
    private static func component(_ pattern: String, _ name: String) -> Bool {
        fnmatch(pattern, name, caseFold) == 0
    }

    /// GNU fnmatch's FNM_CASEFOLD (1 << 4), which Glibc's Swift module does not export (it needs _GNU_SOURCE).
    private static let caseFold: Int32 = 1 << 4
}

/// The include/exclude filter a walk applies. An empty include list means everything.
public struct PathFilter: Sendable, Equatable {
    public var include: [Glob]
    public var exclude: [Glob]

    public init(include: [Glob] = [], exclude: [Glob] = []) {
        self.include = include
        self.exclude = exclude
    }

    public static func == (a: PathFilter, b: PathFilter) -> Bool {
        a.include.map(\.pattern) == b.include.map(\.pattern) && a.exclude.map(\.pattern) == b.exclude.map(\.pattern)
    }

    /// A folder is not entered when an exclude pattern matches it.
    public func entersFolder(_ relative: String) -> Bool {
        !exclude.contains { $0.matches(relative) }
    }

    public func acceptsFile(_ relative: String) -> Bool {
        if exclude.contains(where: { $0.matches(relative) }) { return false }
        return include.isEmpty || include.contains { $0.matches(relative) }
    }
}
