// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// JPEG 2000 (JP2, JPX, bare J2K codestreams): box-level remux. The codestream is copied byte for byte except its
/// removed COM segments (tile-part lengths shrink by what left them); metadata boxes are dropped or rebuilt.
public struct JP2Format: FormatHandler {
    public init() {}

    public func scan(_ input: any ByteSource, options: ScanOptions) throws -> ScanResult<JP2Layout> {
        try JP2Scanner.scan(input, options: options)
    }

    /// A tile-part comment cannot leave a codestream whose TLM segment lists tile-part lengths (rewriting the TLM
    /// is not done): such a comment stays, and says why.
    public func settle(_ findings: [Finding], input: any ByteSource, scan: ScanResult<JP2Layout>,
        policy: Policy) throws -> [Finding] {
        var settled = findings
        for case .codestream(let stream, let comments,
            _) in scan.layout.contents.values where stream.hasTileLengthMarker {
            for (c, item) in comments where stream.comments[c].tilePart != nil {
                settled.keep(item, because: "a tile-part comment in a codestream with a TLM segment is kept: "
                                 + "its tile-part lengths are listed there")
            }
        }
        return settled
    }

    public func clean(_ input: any ByteSource, scan: ScanResult<JP2Layout>, plan: CleanPlan,
        to output: any OutputSink) throws -> CleanResult {
        let layout = scan.layout
        var result = CleanResult(method: .remux)
        if layout.bare, case .codestream(let stream, let comments, let trailing)? = layout.contents[0] {
            result.ledger = try Self.codestream(stream, comments: comments, trailing: trailing, plan: plan)
                .write(from: input, to: output)
            return result
        }
        var out = OutputPlan()
        for (i, box) in layout.boxes.enumerated() {
            switch layout.contents[i] {
            case nil:
                out.copy(box.range, because: .structure)
            case .item(let item):
                if plan.keeps(item) { out.copy(box.range, because: .keptItem(item)) }
            case .metadata(let content, let uuid):
                switch try content.apply(plan: plan, notes: &result.notes) {
                case .unchanged: out.copy(box.range, because: .structure)
                case .removed: break
                case .rebuilt(let bytes): out.append(BoxWriter.box(box.type, bytes,
                    extendedType: uuid.isEmpty ? nil : uuid))
                }
            case .iptc(let datasets, let map):
                guard let data = IPTC.rebuild(datasets, map: map, keeps: plan.keeps) else { break }
                out.append(BoxWriter.box(box.type, data, extendedType: box.extendedType))
            case .header(let children, let unknown):
                guard unknown.keys.contains(where: { !plan.keeps(unknown[$0]!) }) else { out.copy(box.range, because: .structure); break }
                let kept = children.indices.filter { unknown[$0].map(plan.keeps) ?? true }
                let size = kept.reduce(Int64(0)) { $0 + children[$1].size }
                out.append(BoxWriter.header(box.type, payloadSize: size))
                for c in kept { out.copy(children[c].range, because: .structure) }
            case .codestream(let stream, let comments, let trailing):
                let body = Self.codestream(stream, comments: comments, trailing: trailing, plan: plan)
                if body.size == Int64(box.payloadSize) {
                    out.copy(box.range, coded: stream.codedRanges, otherwise: .structure)
                } else {
                    // A last box written "to the end" (size 0) stays so: its length is then the file's.
                    let toEnd = box.sizeForm == .toEnd && i == layout.boxes.count - 1
                    out.append(toEnd ? [0, 0, 0, 0] + Array("jp2c".utf8)
                                     : BoxWriter.header(box.type, payloadSize: body.size,
                                         preferLarge: box.sizeForm == .large))
                    out.append(contentsOf: body)
                }
            }
        }
        if let trailer = layout.trailer, let owner = layout.trailerItem, plan.keeps(owner) { out.copy(trailer, because: .keptItem(owner)) }
        result.ledger = try out.write(from: input, to: output)
        return result
    }

    static func codestream(_ stream: J2KCodestream, comments: [Int: Int], trailing: Int?,
        plan: CleanPlan) -> OutputPlan {
        let removed = Set(comments.filter { !plan.keeps($0.value) }.keys)
        return stream.plan(removing: removed, keepTrailing: trailing.map(plan.keeps) ?? true)
    }

    public func verifyContent(original: any ByteSource, _ before: JP2Layout, cleaned: any ByteSource,
        _ after: JP2Layout,
                              result: CleanResult) throws -> ContentCheck {
        try JP2Verifier.verify(original: original, before, cleaned: cleaned, after)
    }
}
