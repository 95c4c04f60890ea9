// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// Whether a TIFF's orientation can be baked by re-encoding its strips (`orientation: bake` with
/// `reencode: true`): only where libtiff decodes and encodes the samples losslessly and the turned image is
/// the only one left, so nothing in the output can contradict the upright pixels.
enum TIFFBake {
    enum Decision: Equatable {
        case reencode
        case keep(String)
    }

    /// Compressions libtiff codes losslessly: none, LZW, Adobe Deflate, PackBits, old Deflate.
    static let losslessCompressions: Set<UInt64> = [1, 5, 8, 32773, 32946]
    /// WhiteIsZero, BlackIsZero, RGB, palette, separated (CMYK): samples are turned, never interpreted.
    static let turnablePhotometrics: Set<UInt64> = [0, 1, 2, 3, 5]

    static func decide(_ layout: TIFFLayout, _ findings: [Finding], _ input: any ByteSource) throws -> Decision {
        guard let first = layout.chain.first else { return .keep("the file has no image") }
        let node = layout.nodes[first]
        // Other images would stay as stored: a second page or a kept thumbnail next to turned pixels.
        for (index, other) in layout.nodes.enumerated() where index != first && other.role.holdsImage {
            let removed = other.atomicItem.map { findings.indices.contains($0) && findings[$0].disposition != .keep } ?? false
            if !removed {
                return .keep(other.role == .page
                    ? "a multi-page TIFF is not re-encoded (its other pages would keep their own orientation)"
                    : "a kept thumbnail or preview (\(other.path)) would stay unturned")
            }
        }
        let s = layout.structure, ifd = node.ifd
        func value(_ tag: UInt16, _ otherwise: UInt64) throws -> UInt64 { try s.integer(input, ifd, tag) ?? otherwise }
        if ifd.entry(322) != nil || ifd.entry(324) != nil { return .keep("tiled TIFF data is not re-encoded") }
        guard ifd.entry(273) != nil else { return .keep("the TIFF page has no strips to re-encode") }
        let compression = try value(259, 1)
        guard losslessCompressions.contains(compression) else {
            return .keep(compression == 6 || compression == 7
                ? "JPEG-compressed TIFF data would be re-encoded lossily"
                : "TIFF compression \(compression) is not re-encoded (only none, LZW, Deflate and PackBits)")
        }
        guard try value(284, 1) == 1 else { return .keep("planar (separate-plane) TIFF data is not re-encoded") }
        let bits = try ifd.entry(258).flatMap { try s.integers(input, $0) } ?? [1]
        guard let depth = bits.first, depth == 8 || depth == 16, bits.allSatisfy({ $0 == depth }) else {
            return .keep("only 8- and 16-bit TIFF samples are re-encoded")
        }
        guard turnablePhotometrics.contains(try value(262, 2)) else {
            return .keep("TIFF photometric interpretation \(try value(262, 2)) (YCbCr, Lab or other) is not re-encoded")
        }
        guard [1, 2].contains(try value(317, 1)), try value(266, 1) == 1, [1, 2].contains(try value(339, 1)) else {
            return .keep("the TIFF's predictor, fill order or sample format is not re-encoded")
        }
        return .reencode
    }
}

extension TIFFFormat {
    /// An orientation the policy bakes is kept: turning strips or tiles means decoding and re-encoding them.
    /// With `reencode: true` the bake stays where the strips re-encode losslessly (`TIFFBake`).
    public func settle(_ findings: [Finding], input: any ByteSource, scan: ScanResult<Layout>, policy: Policy) throws -> [Finding] {
        // A raw without a magic of its own (NEF, ARW, PEF) keeps what its converter needs, as the raw rows do.
        if case .raw(let raw) = scan.layout { return try RawTIFFFormat().settle(findings, input: input, scan: scan.with(layout: raw), policy: policy) }
        guard case .tiff(let layout) = scan.layout else { return findings }
        guard let item = layout.orientationItem, findings.indices.contains(item),
              findings[item].disposition == .bake, let orientation = layout.orientation, (2...8).contains(orientation) else { return findings }
        var settled = findings
        guard policy.allowReencode else {
            settled.keep(item, because: "rotating TIFF strips or tiles would mean decoding and re-encoding them")
            return settled
        }
        if case .keep(let reason) = try TIFFBake.decide(layout, findings, input) { settled.keep(item, because: reason) }
        return settled
    }

    /// An orientation to bake by re-encoding (`reencode: true`): the strips, losslessly, with the same coding.
    public func reencodableBake(input: any ByteSource, scan: ScanResult<Layout>, plan: CleanPlan) -> ReencodableBake? {
        guard case .tiff(let layout) = scan.layout, let item = layout.orientationItem, let orientation = layout.orientation,
              (2...8).contains(orientation), plan.findings.indices.contains(item), plan.disposition(item) == .bake,
              (try? TIFFBake.decide(layout, plan.findings, input)) == .reencode else { return nil }
        return ReencodableBake(coding: .tiff, orientation: orientation, item: item,
                               reason: "TIFF strips cannot be turned without decoding them; re-encoded losslessly with the same compression")
    }
}
