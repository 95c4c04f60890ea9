// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

#if canImport(Glibc)
import Glibc
#endif

/// One file to process, and where it sits under the path the user named (for mirroring into --output-dir).
public struct InputFile: Sendable, Equatable {
    public var path: String
    public var relative: String
    public var problem: MetascrubError?
    /// Named on the command line (rather than found in a folder): a file the user explicitly asked for.
    public var explicit: Bool
    /// Why the walk reports this entry without reading it (a symbolic link).
    public var skip: Skip?
    /// Size from the walk, for progress (nil when unknown).
    public var size: Int64?

    public enum Skip: Sendable, Equatable {
        /// A link whose target is inside the input root: that target is processed under its own name.
        case symlinkInside
        /// A link leading out of the input root (or dangling): never followed, so nothing outside is read
        /// or published.
        case symlinkOutside

        public var reason: String {
            switch self {
            case .symlinkInside: "symlink: not followed (its target inside the folder is processed under its own name)"
            case .symlinkOutside: "symlink pointing outside the input folder: not followed"
            }
        }
    }

    public init(path: String, relative: String, problem: MetascrubError? = nil, explicit: Bool = true,
                skip: Skip? = nil, size: Int64? = nil) {
        self.path = path
        self.relative = relative
        self.problem = problem
        self.explicit = explicit
        self.skip = skip
        self.size = size
    }
}

/// What a walk leaves out.
public struct WalkOptions: Sendable, Equatable {
    public var filter: PathFilter
    /// Folders never entered (the --output-dir when it lies inside an input folder), by path.
    public var skipFolders: [String]

    public init(filter: PathFilter = PathFilter(), skipFolders: [String] = []) {
        self.filter = filter
        self.skipFolders = skipFolders
    }
}

/// Expands the paths given on the command line into files, recursing into folders in a stable (sorted) order.
/// Symbolic links inside folders are never followed, so a walk never leaves the tree it was given; each is
/// reported as skipped, with a warning when it leads outside.
public enum InputWalker {
    public static let maxDepth = 64
    /// Folders of version-control systems, skipped inside a walk (not when named as an input).
    public static let versionControlFolders: Set<String> = [".git", ".hg", ".svn", ".bzr", "_darcs", ".jj"]

    public static func expand(_ paths: [String], options: WalkOptions = WalkOptions()) -> [InputFile] {
        let skipIDs = Set(options.skipFolders.compactMap(FileIdentity.of))
        var out: [InputFile] = []
        for path in paths {
            var st = stat()
            guard stat(path, &st) == 0 else {
                out.append(InputFile(path: path, relative: Paths.basename(path), problem: .io(operation: "stat", path: path, errno: errno)))
                continue
            }
            if st.st_mode & S_IFMT == S_IFDIR {
                let root = Walk(root: path, realRoot: Paths.real(path) ?? path, filter: options.filter, skip: skipIDs)
                root.walk(relative: "", depth: 0, into: &out)
            } else if options.filter.acceptsFile(Paths.normalised(path)) {
                out.append(InputFile(path: path, relative: Paths.basename(path), size: Int64(st.st_size)))
            }
        }
        return out
    }

    private struct Walk {
        var root: String
        var realRoot: String
        var filter: PathFilter
        var skip: Set<FileIdentity>

        func walk(relative: String, depth: Int, into out: inout [InputFile]) {
            let dirPath = relative.isEmpty ? root : Paths.join(root, relative)
            guard depth < InputWalker.maxDepth else {
                out.append(InputFile(path: dirPath, relative: relative, problem: .limitExceeded(format: "folder", path: dirPath, offset: 0, limit: "\(InputWalker.maxDepth) levels"), explicit: false))
                return
            }
            guard let dir = opendir(dirPath) else {
                out.append(InputFile(path: dirPath, relative: relative, problem: .io(operation: "open directory", path: dirPath, errno: errno), explicit: false))
                return
            }
            var names: [String] = []
            while let entry = readdir(dir) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
                }
                if name == "." || name == ".." { continue }
                names.append(name)
            }
            closedir(dir)
            // Byte order, not locale order: the same tree gives the same report everywhere.
            for name in names.sorted(by: { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }) {
                let rel = relative.isEmpty ? name : relative + "/" + name
                let full = Paths.join(root, rel)
                if name.hasPrefix(PosixFileSystem.temporaryPrefix), name.hasSuffix(".tmp") { continue }
                var st = stat()
                guard lstat(full, &st) == 0 else { continue }
                switch st.st_mode & S_IFMT {
                case S_IFDIR:
                    if skip.contains(FileIdentity(st)) || !filter.entersFolder(rel) { continue }
                    // A repository's own store (objects, packs, hooks) is not content: `scan .` must not read .git.
                    // Named on the command line, a folder is walked whatever its name.
                    if InputWalker.versionControlFolders.contains(name) { continue }
                    walk(relative: rel, depth: depth + 1, into: &out)
                case S_IFREG:
                    if filter.acceptsFile(rel) {
                        out.append(InputFile(path: full, relative: rel, explicit: false, size: Int64(st.st_size)))
                    }
                case S_IFLNK:
                    guard filter.acceptsFile(rel) else { continue }
                    let inside = Paths.real(full).map { Paths.isWithin($0, realRoot) } ?? false
                    out.append(InputFile(path: full, relative: rel, explicit: false, skip: inside ? .symlinkInside : .symlinkOutside))
                default: continue // devices, sockets, FIFOs: never read
                }
            }
        }
    }
}

/// A file's identity (device and inode), to recognise a folder whatever path leads to it.
struct FileIdentity: Hashable, Sendable {
    var device: UInt64
    var inode: UInt64

    init(_ st: stat) {
        device = UInt64(st.st_dev)
        inode = UInt64(st.st_ino)
    }

    static func of(_ path: String) -> FileIdentity? {
        var st = stat()
        return stat(path, &st) == 0 ? FileIdentity(st) : nil
    }
}
