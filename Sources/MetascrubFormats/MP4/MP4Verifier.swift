// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// Checks that a cleaned movie plays exactly what the original played: the same tracks minus the removed
/// ones, each with the same sample bytes (bar neutralised SEI payloads), edit lists, sample descriptions and
/// display matrix; fragments' sample data unchanged.
enum MP4Verifier {
    static func verify(original: any ByteSource, _ a: MP4Layout, cleaned: any ByteSource, _ b: MP4Layout) throws -> ContentCheck {
        var compared = 0
        var samples = 0
        var unsized = 0
        var identical = IdenticalRanges()
        func fail(_ detail: String) -> ContentCheck {
            ContentCheck(method: "sample data, edit lists and display matrix of every kept track compared", passed: false, detail: detail)
        }
        for after in b.tracks {
            guard let before = a.track(after.id) else { return fail("track \(after.id) was not in the original") }
            guard before.handler == after.handler, before.sampleEntries == after.sampleEntries else {
                return fail("track \(after.id) changed its handler or sample description")
            }
            guard before.samples.sampleSizes == after.samples.sampleSizes, before.samples.chunks.count == after.samples.chunks.count else {
                return fail("track \(after.id) changed its sample sizes or chunking")
            }
            for (x, y) in zip(before.samples.chunks, after.samples.chunks) {
                guard try ByteComparison.equal(original, x.range, cleaned, y.range, skipping: a.seiRanges, proving: &identical) else {
                    return fail("sample data of track \(after.id) differs in the chunk at \(x.offset)")
                }
            }
            for path in ["edts", "mdia/minf/stbl/stts", "mdia/minf/stbl/ctts", "mdia/minf/stbl/stss", "mdia/minf/stbl/stsc"] {
                guard try bytes(original, before.node.descendant(path)?.box) == bytes(cleaned, after.node.descendant(path)?.box) else {
                    return fail("\(path) of track \(after.id) changed")
                }
            }
            guard try displayFields(original, before) == displayFields(cleaned, after) else {
                return fail("the display matrix or size of track \(after.id) changed")
            }
            compared += 1
            samples += before.samples.sampleSizes.count
            if !before.samples.sizesKnown { unsized += 1 }
        }
        let removed = a.tracks.count - b.tracks.count
        // Fragments: the sample data boxes after the movie box, in order.
        let fragmentsBefore = a.fragmented ? a.top.filter { $0.type == "mdat" } : []
        let fragmentsAfter = b.fragmented ? b.top.filter { $0.type == "mdat" } : []
        guard fragmentsBefore.count == fragmentsAfter.count else { return fail("the number of fragment data boxes changed") }
        for (x, y) in zip(fragmentsBefore, fragmentsAfter) {
            guard try ByteComparison.equal(original, x.payloadRange, cleaned, y.payloadRange, skipping: a.seiRanges, proving: &identical) else {
                return fail("fragment data at \(x.offset) differs")
            }
        }
        var method = "sample bytes of \(compared) kept track\(compared == 1 ? "" : "s") (\(samples) samples) identical"
        if !a.seiRanges.isEmpty { method += " outside neutralised SEI user data" }
        if unsized > 0 { method += " (\(unsized) track\(unsized == 1 ? " has" : "s have") no sample sizes: only chunk positions checked)" }
        if !fragmentsBefore.isEmpty { method += "; \(fragmentsBefore.count) fragment data boxes identical" }
        method += "; edit lists, timing tables and display matrices identical"
        if removed > 0 { method += "; \(removed) metadata track\(removed == 1 ? "" : "s") removed" }
        var check = ContentCheck(method: method, passed: true)
        // The sample bytes compared (between neutralised SEI payloads) are the residue proof's to skip: searching
        // them again was half of an MP4 clean's CPU (issue 25, round 3).
        check.identical = identical.pairs
        return check
    }

    static func bytes(_ source: any ByteSource, _ box: Box?) throws -> [UInt8]? {
        guard let box else { return nil }
        return try source.read(at: box.payloadOffset, count: Int(box.payloadSize))
    }

    /// tkhd after its times: track ID, duration, layer, volume, matrix, width and height.
    static func displayFields(_ source: any ByteSource, _ track: MP4Track) throws -> [UInt8] {
        guard let tkhd = track.node.child("tkhd")?.box, let payload = try bytes(source, tkhd) else { return [] }
        let skip = payload.first == 1 ? 20 : 12
        return Array(payload.dropFirst(skip))
    }
}
