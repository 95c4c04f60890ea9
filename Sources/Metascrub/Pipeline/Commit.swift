// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubFormats

#if canImport(Glibc)
import Glibc
#endif

/// Part of the Commit stage: the attributes a written file takes from its original before it is renamed into
/// place (the atomic write itself is `CleanDestination.commit`).
struct FileAttributes: Sendable {
    var fileSystem: any FileSystem
    var keepModificationTime: Bool

    init(_ options: ProcessingOptions) {
        fileSystem = options.fileSystem
        keepModificationTime = options.keepModificationTime
    }

    /// Every written file keeps the original's permission bits (the temp file starts as 0600, which would
    /// make a published site unreadable), and with --keep-mtime its times. A file replaced in place
    /// (`keepIdentity`) also keeps its owner, group and extended attributes (ACLs are among them): otherwise a
    /// clean run as root would hand every file to root. What cannot be kept is returned as warnings.
    func apply(from source: FileByteSource, toTemp temp: String, keepIdentity: Bool = false) throws -> [Note] {
        let fs = fileSystem
        var st = stat()
        guard let sourceFD = source.fileDescriptor, fstat(sourceFD, &st) == 0 else { return [] }
        let fd = try fs.openForAttributes(temp)
        defer { fs.close(fd) }
        // Owner first: chown clears set-user-ID and set-group-ID bits, which the mode then restores.
        let notes = keepIdentity ? OwnershipKeeper.copy(from: sourceFD, stat: st, to: fd) : []
        try fs.setMode(fd, mode: st.st_mode & 0o7777, path: temp)
        if keepModificationTime {
            try fs.setTimes(fd, access: st.st_atim, modification: st.st_mtim, path: temp)
        }
        return notes
    }
}
