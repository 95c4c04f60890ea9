// SPDX-License-Identifier: GPL-3.0-or-later
import CQPDF
import MetascrubCore

/// The data of every stream a document references, decoded through its general-purpose filters (Flate, LZW,
/// ASCII85…), one after another: what a byte search of the file cannot see, for the residue proof. Image
/// samples are left out (their bytes mean nothing as text, and they are the bulk of a document); so are streams
/// QPDF cannot decode, whose stored bytes the search sees already.
enum PDFDecodedStreams {
    /// Decoded bytes beyond this fail the proof rather than leave a part of the document unsearched.
    static let limit = 256 << 20

    static func of(_ input: any ByteSource) throws -> [UInt8] {
        let document = try QPDFDocument(input)
        var out: [UInt8] = []
        var visited = Set<PDFRef>()
        var pending = [document.trailer]
        while let oh = pending.popLast() {
            if let ref = document.ref(oh) { guard visited.insert(ref).inserted else { continue } }
            switch document.type(oh) {
            case ot_array:
                for index in 0..<document.count(oh) { pending.append(document.item(oh, index)) }
            case ot_dictionary, ot_stream:
                for key in document.keys(oh) { pending.append(document.get(oh, key)) }
                guard document.isStream(oh), document.name(document.get(oh, "/Subtype")) != "/Image",
                      let data = document.streamData(oh, decoded: true) else { continue }
                out += data
                guard out.count <= limit else {
                    throw MetascrubError.limitExceeded(format: "PDF", path: "decoded streams", offset: 0, limit: "\(limit) bytes")
                }
            default:
                continue
            }
        }
        try document.check("decoded streams")
        return out
    }
}
