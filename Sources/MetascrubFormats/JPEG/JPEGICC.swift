// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// The text tags of an ICC profile split over APP2 segments: read from the profile put together in sequence order,
/// blanked where each byte lies, so every segment keeps its length and the rendering tags are copied unchanged.
extension JPEGScanner {
    static let iccChunkHeader = 14

    static func readICCText(
        _ segments: [Int], _ structure: JPEGStructure, _ source: any ByteSource, _ profileItem: Int,
        into found: inout ItemCollector, layout: inout JPEGLayout
    ) throws {
        var numbered: [(sequence: UInt8, segment: Int, bytes: [UInt8])] = []
        for s in segments {
            let segment = structure.segments[s]
            guard segment.payloadLength >= iccChunkHeader else { return }
            let payload = try source.read(at: segment.payloadOffset, count: segment.payloadLength)
            numbered.append((payload[12], s, Array(payload[iccChunkHeader...])))
        }
        // Sequence numbers run from 1; a profile whose numbers repeat or skip is kept as one block, unread.
        numbered.sort { $0.sequence < $1.sequence }
        guard numbered.enumerated().allSatisfy({ Int($0.element.sequence) == $0.offset + 1 }) else { return }
        var profile: [UInt8] = []
        var chunks: [Int: Range<Int>] = [:]
        for part in numbered {
            chunks[part.segment] = profile.count..<(profile.count + part.bytes.count)
            profile += part.bytes
        }
        guard let edit = ICCTextEdit(profile, parent: profileItem, location: "APP2/ICC_PROFILE", into: &found) else {
            return
        }
        layout.iccText = (edit, chunks)
    }
}

extension JPEGFormat {
    /// The APP2 segment again with its share of the blanked profile, or nil when the plan leaves the text alone.
    static func iccSegment(_ index: Int, _ segment: JPEGStructure.Segment, _ layout: JPEGLayout, _ plan: CleanPlan,
                           _ input: any ByteSource, _ result: inout CleanResult) throws -> OutputPlan.Piece? {
        guard let icc = layout.iccText, let chunk = icc.chunks[index],
              let blanked = icc.edit.blanked(keeps: plan.keeps) else { return nil }
        icc.edit.record(keeps: plan.keeps, into: &result)
        let header = try input.read(at: segment.payloadOffset, count: JPEGScanner.iccChunkHeader)
        return try Self.segment(0xE2, header + Array(blanked[chunk]))
    }
}
