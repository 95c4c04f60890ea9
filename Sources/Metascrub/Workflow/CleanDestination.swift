// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubFormats
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Where a clean's verified output goes: a file replaced atomically, or memory (for standard output). Every
/// caller of the pipeline (file clean, stream clean, conversion, orientation re-encode) writes through one, so
/// the decide → clean → verify path (`FileProcessor.clean(_:detected:...)`) is the same whatever the destination.
protocol CleanDestination {
    /// What the report names as the output ("-" for standard output).
    var name: String { get }
    /// Writes with `write`, then runs `check` on exactly what was written, before anything else can see it;
    /// when either throws, nothing is left.
    func commit(write: (any OutputSink) throws -> Void, check: (any ByteSource) throws -> Void) throws
    /// The source unchanged (nothing to remove, or `--allow-uncleaned`): nothing to check.
    func commit(copyOf source: any ByteSource) throws
}

extension CleanDestination {
    /// Bytes already verified in memory (a re-encode, a conversion): written, and read back unchanged.
    func commit(verified bytes: [UInt8], noun: String) throws {
        try commit(write: { try $0.write(bytes) }, check: { written in
            guard written.size == Int64(bytes.count), try written.readAll() == bytes else {
                throw MetascrubError.verificationFailed(reason: "the \(noun) file on disk differs from what was verified")
            }
        })
    }
}

/// A file, replaced atomically: temp file beside it, checked, given the original's permission bits (and times
/// under --keep-mtime; owner, group and extended attributes in place), renamed. What is already at the path
/// decides whether it may be written at all (`ExistingDestination`): an existing file is replaced only in place,
/// with --overwrite, or by exactly the bytes it holds (an earlier run's output of this input); a special file is
/// written through; a link is refused.
struct FileDestination: CleanDestination {
    var path: String
    var createFolders: Bool
    var options: ProcessingOptions
    /// The original whose attributes the output gets (none for standard input).
    var attributesFrom: FileByteSource?
    /// The input itself is replaced (--in-place): it keeps its owner, group and extended attributes too.
    var inPlace = false
    /// What could not be kept, for the report.
    let notes = NoteCollector()

    var name: String { path }

    func commit(write: (any OutputSink) throws -> Void, check: (any ByteSource) throws -> Void) throws {
        let mustMatch: Bool
        switch try existing() {
        case .writeThrough:
            let memory = MemoryDestination(name: path)
            try memory.commit(write: write, check: check)
            try ExistingDestination.writeThrough(memory.bytes ?? [], to: path)
            return
        case .regularFile: mustMatch = !inPlace && !options.overwrite
        case .none: mustMatch = false
        }
        try AtomicWriter(fileSystem: options.fileSystem).replace(path, createFolders: createFolders, write: write, check: { temp in
            try check(try options.fileSystem.openOwnTemporary(temp))
            try refuseUnlessSame(temp, mustMatch)
            try applyAttributes(temp)
        })
    }

    func commit(copyOf source: any ByteSource) throws {
        let mustMatch: Bool
        switch try existing() {
        case .writeThrough:
            try ExistingDestination.writeThrough(try source.readAll(limit: FileProcessor.streamLimit), to: path)
            return
        case .regularFile: mustMatch = !inPlace && !options.overwrite
        case .none: mustMatch = false
        }
        try AtomicWriter(fileSystem: options.fileSystem).replace(path, createFolders: createFolders, write: { sink in
            try sink.copy(from: source, offset: 0, count: source.size)
        }, check: { temp in
            try refuseUnlessSame(temp, mustMatch)
            try applyAttributes(temp)
        })
    }

    /// What is at the path now; the input itself only in place.
    private func existing() throws -> ExistingDestination {
        if inPlace { return .regularFile(device: 0, inode: 0) }
        let existing = try ExistingDestination.of(path)
        if case .regularFile(let device, let inode) = existing, let fd = attributesFrom?.fileDescriptor {
            var st = stat()
            if fstat(fd, &st) == 0, UInt64(st.st_dev) == device, UInt64(st.st_ino) == inode {
                throw MetascrubError.unsupported(format: "path", reason: "the output \(path) is the input itself; nothing was written (--in-place replaces the input)")
            }
        }
        return existing
    }

    private func refuseUnlessSame(_ temp: String, _ mustMatch: Bool) throws {
        if mustMatch, try !ExistingDestination.sameContent(path, temp, options.fileSystem) {
            throw ExistingDestination.refusal(path)
        }
    }

    private func applyAttributes(_ temp: String) throws {
        guard let attributesFrom else { return }
        notes.add(try FileAttributes(options).apply(from: attributesFrom, toTemp: temp, keepIdentity: inPlace))
    }
}

/// Notes gathered while committing (attributes that could not be kept), read back into the file's report.
final class NoteCollector: Sendable {
    private let notes = Mutex<[Note]>([])
    func add(_ more: [Note]) { if !more.isEmpty { notes.withLock { $0 += more } } }
    var all: [Note] { notes.withLock { $0 } }
}

/// Memory, for `clean - --output -`: a reader of the pipe never sees bytes that were not verified.
final class MemoryDestination: CleanDestination {
    let name: String
    /// The verified output, once committed.
    private(set) var bytes: [UInt8]?

    init(name: String = "-") { self.name = name }

    func commit(write: (any OutputSink) throws -> Void, check: (any ByteSource) throws -> Void) throws {
        let sink = MemoryOutputSink()
        try write(sink)
        try check(MemoryByteSource(sink.bytes))
        bytes = sink.bytes
    }

    func commit(copyOf source: any ByteSource) throws {
        bytes = try source.readAll(limit: FileProcessor.streamLimit)
    }
}
