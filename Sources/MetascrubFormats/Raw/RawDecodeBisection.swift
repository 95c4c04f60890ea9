// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubNative

/// What a raw needs to decode identically, found by trying instead of by a table: the in-place clean the plan
/// asks for is applied in memory and LibRaw decodes the result; when its sensor data or colour data differ, the
/// removals are bisected down to the smallest set whose removal changes LibRaw's output, and exactly those are
/// kept with `neededReason`. Everything else stays removed. Make and Model are tried like any other removal (a
/// DNG carries its own matrices; most other raws are identified by them).
///
/// It runs in `settle`, so scan, clean and the verification's re-scan decide the same: after a clean the kept
/// items are still needed (fixed point) and the removed ones are gone.
enum RawDecodeBisection {
    static let neededReason = "needed to decode the raw identically (LibRaw reads different sensor or colour data without it)"
    static let untestedReason = RawTIFFScanner.decoderReason
        + "; LibRaw cannot decode this raw, so whether it needs them could not be tested"
    /// Decodes a bisection may take before it keeps every candidate instead (each is one LibRaw unpack).
    static let decodeLimit = 64

    static func settle(_ findings: [Finding], input: any ByteSource, layout: RawTIFFLayout, policy: Policy) throws -> [Finding] {
        var settled = findings.keeping(layout.required)
        let candidates = settled.indices.filter { i in
            settled[i].disposition != .keep && settled[i].disposition != .fail
                && (layout.actions[i] != nil || layout.xmp.contains { $0.keys[i] != nil })
        }
        guard !candidates.isEmpty else { return settled }
        let untested = Dictionary(uniqueKeysWithValues: layout.decoderItems.map { ($0, untestedReason) })
        guard layout.undecodable == nil, input.size <= RawTIFFScanner.exiv2Limit else { return settled.keeping(untested) }
        let original = try input.readAll()
        guard let before = try? RawTIFFFormat.fingerprint(MemoryByteSource(original), layout: layout) else { return settled.keeping(untested) }

        var decodes = 0
        func identical(keeping extra: [Int]) throws -> Bool {
            decodes += 1
            var trial = settled
            for i in extra { trial[i] = trial[i].keptInstead(because: neededReason) }
            var notes: [Note] = []
            let patches = try RawTIFFPatcher.patches(layout, source: input, plan: CleanPlan(findings: trial, policy: policy), notes: &notes)
            var bytes = original
            for patch in patches.patches {
                bytes.replaceSubrange(Int(patch.offset)..<Int(patch.offset) + patch.bytes.count, with: patch.bytes)
            }
            // Remembered: the candidate that passes is the output the verification decodes again.
            return (try? RawDecodeMemo.fingerprint(bytes: bytes)) == before
        }
        if try identical(keeping: []) { return settled }
        // A decode that differs from itself proves nothing either way: nothing is kept for its sake, and the raw
        // is proven byte by byte as one LibRaw cannot decode (`RawDecodeStability`).
        guard RawDecodeStability.reproducible(bytes: original) else { return settled }
        // Keeping every removal does not help either: nothing to keep; the verification then says what differs.
        guard try identical(keeping: candidates) else { return settled }
        let needed = try smallestNeeded(candidates) { try decodes < decodeLimit ? identical(keeping: $0) : false }
        for i in needed ?? candidates {
            // A field the policy removes that identifies someone is never kept for decoding's sake: it stays to be
            // removed, with the reason, and the clean refuses naming it (`sensitiveNeeded`).
            if sensitive(settled[i], i, layout: layout) {
                settled[i].reason = neededReason
            } else {
                settled[i] = settled[i].keptInstead(because: neededReason)
            }
        }
        return settled
    }

    /// The smallest set of `candidates` whose keeping makes `passes` true, given that keeping all of them does
    /// and that keeping more never hurts: one needed item at a time, each found by a binary search for the
    /// shortest prefix of the remaining pool that passes with the items already found. Nil when the search
    /// does not converge (a decoder that is not monotonic, or the decode limit).
    static func smallestNeeded(_ candidates: [Int], passes: ([Int]) throws -> Bool) throws -> [Int]? {
        var needed: [Int] = []
        var pool = candidates
        while try !passes(needed) {
            guard !pool.isEmpty else { return nil }
            var lo = 1, hi = pool.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if try passes(needed + pool[..<mid]) { hi = mid } else { lo = mid + 1 }
            }
            needed.append(pool[lo - 1])
            pool = Array(pool[..<(lo - 1)])
        }
        return needed
    }

    /// Items a raw needs (the bisection's reason on them) that are themselves sensitive (a serial, an owner, a
    /// place, a time), or a whole maker note it needs whose identifying fields could not be located: the raw is
    /// then refused rather than cleaned with them in it, and the refusal names them.
    static func sensitiveNeeded(_ findings: [Finding], layout: RawTIFFLayout) -> [String] {
        findings.indices.filter { i in
            findings[i].reason == neededReason && sensitive(findings[i], i, layout: layout)
        }.map { "\(findings[$0].item.key) at \(findings[$0].item.location)" }
    }

    /// A serial, an owner, a place or a time, or a whole maker note whose identifying fields were not located.
    static func sensitive(_ f: Finding, _ i: Int, layout: RawTIFFLayout) -> Bool {
        if [.location, .time, .identity].contains(f.item.category)
            || ["Serial", "Owner", "UniqueID", "ShutterCount"].contains(where: { f.item.key.contains($0) }) {
            return true
        }
        let wholeNote = ["exif:MakerNote", "exif:DNGPrivateData"].contains(f.item.key)
        return wholeNote && !layout.partOf.values.contains(i)
    }
}
