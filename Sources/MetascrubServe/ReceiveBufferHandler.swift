// SPDX-License-Identifier: GPL-3.0-or-later
import NIOCore

/// Lets a connection read an upload in larger pieces than NIO's default (at most 64 KiB a read): every piece is
/// one more read and one more step of the body's async stream before it reaches the spool. The allocator still
/// starts small and grows only while reads fill it, so an idle or slow connection holds no more than before.
final class ReceiveBufferHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    static let maximum = 256 << 10

    func handlerAdded(context: ChannelHandlerContext) {
        let allocator = AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 2048, maximum: Self.maximum)
        context.channel.setOption(ChannelOptions.recvAllocator, value: allocator).whenComplete { _ in }
        context.pipeline.syncOperations.removeHandler(self).whenComplete { _ in }
    }
}
