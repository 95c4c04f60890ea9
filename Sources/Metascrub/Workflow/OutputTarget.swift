// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

#if canImport(Glibc)
import Glibc
#endif

/// Where a mirrored file goes under --output-dir. Names come from folder listings or the command line and
/// are never trusted: whatever they are, nothing is written outside the output folder.
enum OutputTarget {
    static func inside(_ dir: String, _ relative: String) throws(MetascrubError) -> String {
        let parts = relative.split(separator: "/", omittingEmptySubsequences: false)
        guard !relative.hasPrefix("/"), !parts.isEmpty,
              parts.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." && !$0.contains("\u{0}") })
        else {
            throw .unsupported(format: "path", reason: "the name cannot be mirrored safely inside the output folder; nothing was written")
        }
        // A folder on the way that is a link (left there by someone else) would carry the write elsewhere.
        var current = dir
        for part in parts.dropLast() {
            current = Paths.join(current, String(part))
            var st = stat()
            if lstat(current, &st) == 0, st.st_mode & S_IFMT != S_IFDIR {
                throw .unsupported(format: "path", reason: "\(current) is not a real folder inside the output folder (a link or a file); nothing was written")
            }
        }
        let target = Paths.join(dir, relative)
        var st = stat()
        if lstat(target, &st) == 0, st.st_mode & S_IFMT == S_IFDIR {
            throw .unsupported(format: "path", reason: "\(target) is a folder; nothing was written")
        }
        return target
    }
}
