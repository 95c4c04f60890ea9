// SPDX-License-Identifier: GPL-3.0-or-later
import CPlatform
import MetascrubCore

#if canImport(Glibc)
import Glibc
#endif

/// What makes a file replaced in place still the same file to its owner: owner, group and extended attributes
/// (POSIX ACLs and SELinux labels are extended attributes too). Copied onto the temp file before the rename.
/// Each attribute that cannot be copied (not permitted, not supported by the file system) is a warning: the
/// clean itself is still right, the file's surroundings changed, and the user is told which way.
enum OwnershipKeeper {
    static func copy(from source: Int32, stat st: stat, to temp: Int32) -> [Note] {
        var notes: [Note] = []
        if fchown(temp, st.st_uid, st.st_gid) != 0 {
            notes.append(Note(.warning, code: "owner-not-kept",
                              "could not keep the owner and group (\(st.st_uid):\(st.st_gid)): \(text(errno)); the cleaned file belongs to this user"))
        }
        let names: [String]
        do {
            names = try attributeNames(source)
        } catch {
            if error.code != ENOTSUP {
                notes.append(Note(.warning, code: "xattr-not-kept", "could not list the extended attributes: \(text(error.code))"))
            }
            return notes
        }
        for name in names {
            guard let value = attribute(source, name) else { continue }
            let result = value.withUnsafeBytes { ms_fsetxattr(temp, name, $0.baseAddress, $0.count) }
            if result != 0 {
                notes.append(Note(.warning, code: "xattr-not-kept", "could not keep the extended attribute \(name): \(text(errno))"))
            }
        }
        return notes
    }

    struct Failure: Error { var code: Int32 }

    static func attributeNames(_ fd: Int32) throws(Failure) -> [String] {
        while true {
            let size = ms_flistxattr(fd, nil, 0)
            guard size >= 0 else { throw Failure(code: errno) }
            if size == 0 { return [] }
            var buffer = [CChar](repeating: 0, count: size)
            let got = ms_flistxattr(fd, &buffer, size)
            if got < 0, errno == ERANGE { continue } // grew in between
            guard got >= 0 else { throw Failure(code: errno) }
            return buffer[0..<got].split(separator: 0).map { String(decoding: $0.map { UInt8(bitPattern: $0) }, as: UTF8.self) }
        }
    }

    static func attribute(_ fd: Int32, _ name: String) -> [UInt8]? {
        for _ in 0..<4 {
            let size = ms_fgetxattr(fd, name, nil, 0)
            guard size >= 0 else { return nil }
            var value = [UInt8](repeating: 0, count: size)
            let got = value.withUnsafeMutableBytes { ms_fgetxattr(fd, name, $0.baseAddress, size) }
            if got < 0, errno == ERANGE { continue }
            guard got >= 0 else { return nil }
            return Array(value[0..<got])
        }
        return nil
    }

    private static func text(_ code: Int32) -> String {
        strerror(code).map { String(cString: $0) } ?? "errno \(code)"
    }
}
