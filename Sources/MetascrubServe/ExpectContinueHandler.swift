// SPDX-License-Identifier: GPL-3.0-or-later
import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Answers `Expect: 100-continue` (curl sends it for bodies over 1 MB and otherwise waits a second before
/// sending the body), unless the declared length is already over the limit: then the 413 comes without the body.
final class ExpectContinueHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundOut = HTTPResponsePart

    let maxBytes: Int64

    init(maxBytes: Int64) { self.maxBytes = maxBytes }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var head) = unwrapInboundIn(data),
              head.headerFields[.expect]?.lowercased() == "100-continue" else {
            context.fireChannelRead(data)
            return
        }
        head.headerFields[.expect] = nil
        let declared = head.headerFields[.contentLength].flatMap { Int64($0) } ?? 0
        if declared <= maxBytes {
            context.writeAndFlush(wrapOutboundOut(.head(HTTPResponse(status: .continue))), promise: nil)
        }
        context.fireChannelRead(wrapInboundOut(.head(head)))
    }
}
