// SPDX-License-Identifier: GPL-3.0-or-later
import Glibc
import Hummingbird
import NIOCore
import NIOHTTP1
import NIOHTTPTypesHTTP1
import Synchronization

/// Sends a verified file to the client with sendfile(2), from the spool's pages to the socket, instead of reading
/// it into buffers and writing those: the read-back was about a twentieth of the server's CPU per photo.
///
/// Hummingbird's response writer takes byte buffers only, so the body carries a 16-byte marker (this process's
/// random word and a token the connection's writer handed out); this handler, placed below the HTTP/1 codec where
/// a body may be a file region, swaps the marker for the file. A body that is not an armed marker passes untouched.
final class FileRegionWriter: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// A file to send: the responder's descriptor (open until `sent` completes), its length, who waits.
    private struct Armed: Sendable {
        let fd: Int32
        let size: Int64
        let sent: EventLoopPromise<Void>
    }

    /// The files armed on each connection that has a writer. Arming and the writer's removal take the same lock, so a
    /// file is either refused (no writer: it is streamed instead) or failed when the writer goes: none waits forever.
    private static let connections = Mutex<[ObjectIdentifier: [UInt64: Armed]]>([:])
    private static let lastToken = Atomic<UInt64>(0)
    private static let word = UInt64.random(in: 1...UInt64.max)

    static func marker(_ token: UInt64) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.writeInteger(word)
        buffer.writeInteger(token)
        return buffer
    }

    /// The token of the marker that stands for `fd`'s first `size` bytes on `channel`, and what completes once
    /// they are sent; nil when the connection has no writer (or no longer has one).
    static func arm(fd: Int32, size: Int64, on channel: any Channel) -> (token: UInt64, sent: EventLoopFuture<Void>)? {
        let token = lastToken.wrappingAdd(1, ordering: .relaxed).newValue
        return connections.withLock { all -> (UInt64, EventLoopFuture<Void>)? in
            guard all[ObjectIdentifier(channel)] != nil else { return nil }
            let sent = channel.eventLoop.makePromise(of: Void.self)
            all[ObjectIdentifier(channel)]?[token] = Armed(fd: fd, size: size, sent: sent)
            return (token, sent.futureResult)
        }
    }

    static func disarm(_ token: UInt64, on channel: any Channel, failing error: any Error) {
        connections.withLock { $0[ObjectIdentifier(channel)]?.removeValue(forKey: token) }?.sent.fail(error)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        Self.connections.withLock { $0[ObjectIdentifier(context.channel)] = [:] }
    }

    /// Markers never written (the connection closed first) fail their waiters, so no response holds its job.
    func handlerRemoved(context: ChannelHandlerContext) {
        let left = Self.connections.withLock { $0.removeValue(forKey: ObjectIdentifier(context.channel)) } ?? [:]
        for file in left.values { file.sent.fail(ChannelError.ioOnClosedChannel) }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .body(.byteBuffer(let buffer)) = unwrapOutboundIn(data), buffer.readableBytes == 16,
              buffer.getInteger(at: buffer.readerIndex, as: UInt64.self) == Self.word,
              let token = buffer.getInteger(at: buffer.readerIndex + 8, as: UInt64.self),
              let file = Self.connections.withLock({
                  $0[ObjectIdentifier(context.channel)]?.removeValue(forKey: token)
              })
        else {
            context.write(data, promise: promise)
            return
        }
        // The responder's descriptor, lent: it stays open until `sent` completes, and the responder closes it.
        let handle = NIOFileHandle(_deprecatedTakingOwnershipOfDescriptor: file.fd)
        let written = context.eventLoop.makePromise(of: Void.self)
        let watch = Self.watchLength(file.fd, size: file.size, of: context.channel)
        written.futureResult.whenComplete { result in
            watch.cancel()
            _ = try? handle.takeDescriptorOwnership()
            file.sent.completeWith(result)
            promise?.completeWith(result)
        }
        guard Self.length(file.fd) >= file.size else {
            written.fail(ServeError(status: .internalServerError, code: "io", message: "the cleaned file shrank"))
            return
        }
        let region = FileRegion(fileHandle: handle, readerIndex: 0, endIndex: Int(file.size))
        context.write(wrapOutboundOut(.body(.fileRegion(region))), promise: written)
    }

    private static func length(_ fd: Int32) -> Int64 {
        var st = stat()
        return fstat(fd, &st) == 0 ? Int64(st.st_size) : -1
    }

    /// A file that shrinks while it is sent would have NIO retry `sendfile` at its end forever (it reads 0 bytes
    /// as "try again", on a socket that is always writable): a worker still running, or anyone else who may write
    /// the spool, could hold an event loop and the job that way. Workers are not allowed to shorten a file where
    /// Landlock can say so (ABI 3); this closes the connection within a quarter of a second wherever it happens.
    private static func watchLength(_ fd: Int32, size: Int64, of channel: any Channel) -> RepeatedTask {
        channel.eventLoop.scheduleRepeatedTask(initialDelay: .milliseconds(250), delay: .milliseconds(250)) { task in
            guard length(fd) < size else { return }
            task.cancel()
            channel.close(promise: nil)
        }
    }

    /// Added with the connection's other handlers (above the codec), it puts a `FileRegionWriter` below the codec and
    /// leaves.
    final class Installer: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = NIOAny

        func handlerAdded(context: ChannelHandlerContext) {
            let pipeline = context.pipeline.syncOperations
            if let codec = try? pipeline.handler(type: HTTP1ToHTTPServerCodec.self) {
                try? pipeline.addHandler(FileRegionWriter(), position: .before(codec))
            }
            pipeline.removeHandler(self).whenComplete { _ in }
        }
    }
}

extension OpenFile {
    /// The whole file to the client: with sendfile when `channel` has a `FileRegionWriter`, read and written in
    /// chunks otherwise. Returns once the kernel has the bytes (or throws), so the file stays open until then.
    func send(to writer: inout any ResponseBodyWriter, over channel: any Channel) async throws {
        guard let (token, sent) = FileRegionWriter.arm(fd: fd, size: size, on: channel) else {
            return try await stream(to: &writer)
        }
        do {
            try await writer.write(FileRegionWriter.marker(token))
        } catch {
            // Never to be sent: taken back (unless the writer took it already, and will complete `sent` itself).
            FileRegionWriter.disarm(token, on: channel, failing: error)
            throw error
        }
        // A marker queued but never written is failed when the connection's writer goes.
        try await sent.get()
    }
}
