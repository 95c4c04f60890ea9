// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubFormats

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
/// under --keep-mtime), renamed.
struct FileDestination: CleanDestination {
    var path: String
    var createFolders: Bool
    var options: ProcessingOptions
    /// The original whose attributes the output gets (none for standard input).
    var attributesFrom: FileByteSource?

    var name: String { path }

    func commit(write: (any OutputSink) throws -> Void, check: (any ByteSource) throws -> Void) throws {
        try AtomicWriter(fileSystem: options.fileSystem).replace(path, createFolders: createFolders, write: write, check: { temp in
            try check(try options.fileSystem.openOwnTemporary(temp))
            try applyAttributes(temp)
        })
    }

    func commit(copyOf source: any ByteSource) throws {
        try AtomicWriter(fileSystem: options.fileSystem).replace(path, createFolders: createFolders, write: { sink in
            try sink.copy(from: source, offset: 0, count: source.size)
        }, check: { temp in try applyAttributes(temp) })
    }

    private func applyAttributes(_ temp: String) throws {
        if let attributesFrom { try FileProcessor(options: options).applyAttributes(from: attributesFrom, toTemp: temp) }
    }
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
