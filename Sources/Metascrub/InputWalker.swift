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

    public init(path: String, relative: String, problem: MetascrubError? = nil) {
        self.path = path
        self.relative = relative
        self.problem = problem
    }
}

/// Expands the paths given on the command line into files, recursing into folders in a stable order.
/// Symbolic links are not followed inside folders, so a walk never leaves the tree it was given.
public enum InputWalker {
    public static let maxDepth = 64

    public static func expand(_ paths: [String]) -> [InputFile] {
        var out: [InputFile] = []
        for path in paths {
            var st = stat()
            guard stat(path, &st) == 0 else {
                out.append(InputFile(path: path, relative: Paths.basename(path), problem: .io(operation: "stat", path: path, errno: errno)))
                continue
            }
            if st.st_mode & S_IFMT == S_IFDIR {
                walk(root: path, relative: "", depth: 0, into: &out)
            } else {
                out.append(InputFile(path: path, relative: Paths.basename(path)))
            }
        }
        return out
    }

    private static func walk(root: String, relative: String, depth: Int, into out: inout [InputFile]) {
        let dirPath = relative.isEmpty ? root : Paths.join(root, relative)
        guard depth < maxDepth else {
            out.append(InputFile(path: dirPath, relative: relative, problem: .limitExceeded(format: "folder", path: dirPath, offset: 0, limit: "\(maxDepth) levels")))
            return
        }
        guard let dir = opendir(dirPath) else {
            out.append(InputFile(path: dirPath, relative: relative, problem: .io(operation: "open directory", path: dirPath, errno: errno)))
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
        for name in names.sorted() {
            let rel = relative.isEmpty ? name : relative + "/" + name
            let full = Paths.join(root, rel)
            if name.hasPrefix(PosixFileSystem.temporaryPrefix), name.hasSuffix(".tmp") { continue }
            var st = stat()
            guard lstat(full, &st) == 0 else { continue }
            switch st.st_mode & S_IFMT {
            case S_IFDIR: walk(root: root, relative: rel, depth: depth + 1, into: &out)
            case S_IFREG: out.append(InputFile(path: full, relative: rel))
            default: continue // symlinks, devices, sockets: never followed
            }
        }
    }
}
