// SPDX-License-Identifier: GPL-3.0-or-later
import CAVBridge
import MetascrubCore

#if canImport(Glibc)
import Glibc
#endif

/// One thing libavformat reported about a file (see `cav_entry_kind`).
struct AVEntry {
    enum Kind: Int32 {
        case format = 0, stream, chapter, formatTag, streamTag, chapterTag, programTag
    }

    var kind: Kind
    var index: Int
    var key: String
    var value: String
}

/// A tag the policy keeps, to be written into the remuxed file.
struct AVKeptTag {
    var kind: AVEntry.Kind
    var index: Int
    var key: String
    var value: String
}

/// Swift's side of the C bridge (`CAVBridge`): FFmpeg reads from a `ByteSource` and writes into a
/// `PatchableOutputSink` through callbacks, so the pipeline's temp file, fsync and atomic rename stay in charge.
/// FFmpeg itself is loaded with dlopen by the first call here, never at process start.
enum AVLibrary {
    static let name = "libavformat"

    /// What both callback directions keep: the position FFmpeg's callbacks move, and the first I/O error, to
    /// rethrow it typed.
    class Cursor {
        var position: Int64 = 0
        var failure: (any Error)?

        /// Remembers the first error and answers FFmpeg's -1.
        func failed(_ error: any Error) -> Int32 {
            failure = failure ?? error
            return -1
        }

        /// The seek callback: `CAV_SEEK_SIZE` asks for the size, otherwise the new position, or -1 for a whence
        /// it does not know or a target before the start.
        func seek(_ offset: Int64, _ whence: Int32, size: Int64) -> Int64 {
            let target: Int64
            switch whence {
            case CAV_SEEK_SIZE: return size
            case SEEK_SET: target = offset
            case SEEK_CUR: target = position + offset
            case SEEK_END: target = size + offset
            default: return -1
            }
            guard target >= 0 else { return -1 }
            position = target
            return target
        }
    }

    /// The reading side.
    final class Input: Cursor {
        let source: any ByteSource

        init(_ source: any ByteSource) { self.source = source }

        func read(_ buffer: UnsafeMutablePointer<UInt8>, _ size: Int32) -> Int32 {
            let count = Int(min(Int64(size), max(0, source.size - position)))
            if count == 0 { return 0 }
            do {
                let bytes = try source.read(at: position, count: count)
                bytes.withUnsafeBufferPointer { buffer.update(from: $0.baseAddress!, count: count) }
                position += Int64(count)
                return Int32(count)
            } catch {
                return failed(error)
            }
        }

        func seek(_ offset: Int64, _ whence: Int32) -> Int64 {
            seek(offset, whence, size: source.size)
        }
    }

    /// The writing side; writes before the end overwrite (muxers patch headers), writes at the end append.
    final class Output: Cursor {
        let sink: any PatchableOutputSink

        init(_ sink: any PatchableOutputSink) { self.sink = sink }

        func write(_ pointer: UnsafePointer<UInt8>, _ size: Int32) -> Int32 {
            let bytes = Array(UnsafeBufferPointer(start: pointer, count: Int(size)))
            do {
                let end = sink.bytesWritten
                if position > end { try sink.write([UInt8](repeating: 0, count: Int(position - end))) }
                let inside = Int(max(0, min(Int64(bytes.count), sink.bytesWritten - position)))
                if inside > 0 { try sink.overwrite(Array(bytes[0..<inside]), at: position) }
                if inside < bytes.count { try sink.write(Array(bytes[inside...])) }
                position += Int64(bytes.count)
                return 0
            } catch {
                return failed(error)
            }
        }

        func seek(_ offset: Int64, _ whence: Int32) -> Int64 {
            seek(offset, whence, size: sink.bytesWritten)
        }
    }

    final class Collector {
        var entries: [AVEntry] = []
    }

    /// Runs one bridge call reading `source`: an I/O error of the source is rethrown as it was; otherwise a
    /// negative return becomes `failure(FFmpeg's message)`.
    static func run(_ source: any ByteSource, output: Output? = nil, failure: (String) -> MetascrubError,
                    _ body: (UnsafePointer<cav_input>, UnsafeMutablePointer<CChar>, Int) -> Int32) throws {
        let input = Input(source)
        var callbacks = cav_input(
            opaque: Unmanaged.passUnretained(input).toOpaque(),
            read: { opaque, buffer, size in Unmanaged<Input>.fromOpaque(opaque!).takeUnretainedValue().read(buffer!, size) },
            seek: { opaque, offset, whence in Unmanaged<Input>.fromOpaque(opaque!).takeUnretainedValue().seek(offset, whence) })
        var message = [CChar](repeating: 0, count: 512)
        let code = withExtendedLifetime(input) {
            withUnsafePointer(to: &callbacks) { pointer in
                message.withUnsafeMutableBufferPointer { body(pointer, $0.baseAddress!, $0.count) }
            }
        }
        if let error = input.failure ?? output?.failure { throw error }
        if code < 0 {
            throw failure(String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
    }

    static func load() throws {
        var message = [CChar](repeating: 0, count: 512)
        if message.withUnsafeMutableBufferPointer({ cav_load($0.baseAddress, $0.count) }) != 0 {
            throw MetascrubError.library(name: name, message: String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
    }

    /// The format, streams, chapters and every tag, as libavformat sees them.
    static func scan(_ source: any ByteSource, format: String) throws -> [AVEntry] {
        try load()
        let collector = Collector()
        try run(source, failure: { MetascrubError.malformed(format: format, path: "container", offset: 0, reason: $0) }) { input, err, size in
            cav_scan(input, Unmanaged.passUnretained(collector).toOpaque(), { opaque, kind, index, key, value in
                let collector = Unmanaged<Collector>.fromOpaque(opaque!).takeUnretainedValue()
                guard let kind = AVEntry.Kind(rawValue: kind) else { return }
                collector.entries.append(AVEntry(kind: kind, index: Int(index), key: String(cString: key!), value: String(cString: value!)))
            }, err, size)
        }
        return collector.entries
    }

    /// Stream copy into `muxer` with only the kept streams, chapters and tags.
    static func remux(_ source: any ByteSource, to sink: any PatchableOutputSink, muxer: String, keepStreams: [Bool],
                      keepChapters: Bool, tags: [AVKeptTag], format: String) throws {
        try load()
        let output = Output(sink)
        var outputCallbacks = cav_output(
            opaque: Unmanaged.passUnretained(output).toOpaque(),
            write: { opaque, buffer, size in Unmanaged<Output>.fromOpaque(opaque!).takeUnretainedValue().write(buffer!, size) },
            seek: { opaque, offset, whence in Unmanaged<Output>.fromOpaque(opaque!).takeUnretainedValue().seek(offset, whence) })
        // strdup'd copies, freed when the call returns.
        let keys = tags.map { strdup($0.key) }
        let values = tags.map { strdup($0.value) }
        defer { (keys + values).forEach { free($0) } }
        let cTags = tags.indices.map {
            cav_tag(kind: tags[$0].kind.rawValue, index: Int32(tags[$0].index), key: keys[$0], value: values[$0])
        }
        let keep = keepStreams.map { UInt8($0 ? 1 : 0) }
        try withExtendedLifetime(output) {
            try run(source, output: output, failure: { MetascrubError.library(name: name, message: "\(format): \($0)") }) { input, err, size in
                withUnsafePointer(to: &outputCallbacks) { out in
                    cav_remux(input, out, muxer, keep, Int32(keep.count), keepChapters ? 1 : 0, cTags, Int32(cTags.count), err, size)
                }
            }
        }
    }

    /// Per-stream frame counts and chained hashes of every decoded frame (packets where there is no decoder).
    static func digest(_ source: any ByteSource, format: String) throws -> [cav_stream_digest] {
        try load()
        var digests = [cav_stream_digest](repeating: cav_stream_digest(), count: 64)
        var count: Int32 = 0
        try run(source, failure: { MetascrubError.verificationFailed(reason: "\(format): \($0)") }) { input, err, size in
            digests.withUnsafeMutableBufferPointer { cav_digest(input, $0.baseAddress, Int32($0.count), &count, err, size) }
        }
        guard Int(count) <= digests.count else {
            throw MetascrubError.limitExceeded(format: format, path: "streams", offset: 0, limit: "\(digests.count) streams")
        }
        return Array(digests.prefix(Int(count)))
    }
}
