// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubNative
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Whether a JPEG's EXIF orientation can be baked into the image as the policy asks.
///
/// The answer depends only on the coded image, the orientation value and the policy's budgets, all of which a
/// clean leaves as they are when it keeps the tag, so scan, clean and a second clean always agree (clean is a
/// fixed point). Its cost is bounded whatever the content (issue 25):
/// 1. the transform and the MCU alignment decide whether a perfect DCT-domain transform exists at all (header);
/// 2. an image over the pixel budget (`max-pixels`) keeps its tag without decoding anything: a 4 MB JPEG may
///    declare 16000×16000 pixels (1.5 GB and 9 s to decode both ways);
/// 3. a band of the first MCU rows is transformed and decoded both ways, which settles real photos (decoder
///    rounding differs almost everywhere) for a few kilobytes of decoding;
/// 4. only an image whose band decodes identically (flat regions: a sky, a night shot, a synthetic image) and
///    that is at most `proofPixels` is decoded whole, both ways, to prove every pixel; a larger one keeps its
///    tag with that reason. Proving a 12 MP photo would cost 20× its upright twin, and the tag it keeps is
///    harmless (viewers display the same; `orientation: rotate` bakes anyway).
///
/// Under `reencode: true` the answer is one ladder for every caller (issue 23): the exact turn; else the same
/// DCT-domain turn when its decode is within min-psnr of the displayed original (`.turn`: only decoder rounding
/// differs, no coefficient is requantised, so it beats any re-encode); else `.keep` with the reason, which
/// `JPEGFormat.reencodableBake` hands to the re-encoder (partial edge MCUs, or a turn under min-psnr). No rung
/// runs over the pixel budget: the tag stays under `reencode: false`, and the re-encode it would need is refused
/// clearly under `reencode: true` (`PixelBudgetTests`).
enum JPEGBake {
    enum Decision: Equatable {
        /// Orientation 1, or a value that means nothing: the tag can simply go.
        case drop
        case transform(LosslessJPEG.Transform)
        /// `reencode: true` only: a DCT-domain turn whose decode differs from the displayed original by decoder
        /// rounding alone, measured within the policy's min-psnr. It requantises no coefficient, so it beats any
        /// re-encode of the same pixels (issue 23's ladder: exact turn, this turn, re-encode, keep).
        case turn(LosslessJPEG.Transform, Fidelity)
        case keep(reason: String)
    }

    /// MCU rows in the sample band.
    static let bandRows = 2
    /// The largest image a bake decision decodes whole to prove a rotation exact: about 10 ms of decoding.
    static let proofPixels = 1 << 20

    static func decide(_ input: any ByteSource, _ layout: JPEGLayout, policy: Policy, proofPixels: Int = JPEGBake.proofPixels) -> Decision {
        let mode = policy.orientation
        guard let orientation = layout.orientation, let transform = JPEGFormat.transform(forOrientation: orientation) else {
            return .drop
        }
        guard let frame = try? Frame.read(input, layout.structure) else {
            return .keep(reason: "the frame header could not be read, so no lossless rotation can be planned")
        }
        guard frame.isPerfect(for: transform) else {
            return .keep(reason: "\(frame.width)×\(frame.height) is not a whole number of \(frame.mcuWidth)×\(frame.mcuHeight) MCUs, so it cannot be rotated losslessly without cropping")
        }
        // The transform holds every coefficient and its verification decodes the image: both are whole-image work.
        if let reason = overBudget(frame, policy: policy) { return .keep(reason: reason) }
        if mode == .rotate { return .transform(transform) }
        let inexact = "a lossless rotation would not decode to exactly the same pixels (decoder rounding), so the display would change; `orientation: rotate` bakes anyway"
        if let band = band(input, layout.structure, frame) {
            guard BandMemo.exact(band, orientation: orientation, transform) else {
                return rounded(input, orientation: orientation, transform, policy: policy, inexact: inexact)
            }
        }
        // With re-encoding allowed the alternative decodes the whole image anyway (within the pixel budget,
        // checked above): measuring the turn is the proof, and an identical decode is the exact rung.
        if policy.allowReencode { return rounded(input, orientation: orientation, transform, policy: policy, inexact: inexact) }
        guard frame.width * frame.height <= min(proofPixels, policy.maxPixels) else {
            return .keep(reason: "proving that a lossless rotation displays exactly the same would mean decoding all \(frame.width)×\(frame.height) pixels twice, over the \(PixelBudget.describe(min(proofPixels, policy.maxPixels))) a bake decision decodes; `orientation: rotate` bakes anyway")
        }
        guard input.size <= JPEGFormat.transformLimit, let whole = try? input.readAll(),
              let same = try? exact(whole, orientation: orientation, transform, tolerant: false) else {
            return .keep(reason: "the image could not be decoded to prove that a lossless rotation displays the same")
        }
        return same ? .transform(transform) : .keep(reason: inexact)
    }

    /// Why an image is not turned, re-encoded or decoded at all: over the pixel budget. Nil within it.
    static func overBudget(_ frame: Frame, policy: Policy) -> String? {
        guard !PixelBudget.allows(width: frame.width, height: frame.height, limit: policy.maxPixels) else { return nil }
        return "\(frame.width)×\(frame.height) is over the pixel budget of \(PixelBudget.describe(policy.maxPixels)) (`--max-pixels`, policy `max-pixels:`), so the image is not rotated or decoded"
    }

    /// The second rung (`reencode: true`): the whole image turned in the DCT domain and its decode measured
    /// against the original's displayed render. Identical is the exact rung; within min-psnr is `.turn`; below,
    /// or without re-encoding allowed, the tag is kept with the reason (and the re-encoder may take it).
    static func rounded(_ input: any ByteSource, orientation: Int, _ transform: LosslessJPEG.Transform, policy: Policy,
                        inexact: String) -> Decision {
        guard policy.allowReencode else { return .keep(reason: inexact) }
        guard input.size <= JPEGFormat.transformLimit, let whole = try? input.readAll(),
              let fidelity = try? turnFidelity(whole, orientation: orientation, transform) else {
            return .keep(reason: "\(inexact); the DCT-domain turn could not be decoded to measure it")
        }
        if fidelity.identical { return .transform(transform) }
        guard fidelity.meets(policy.minimumPSNR) else {
            return .keep(reason: "\(inexact); a DCT-domain turn decodes at \(fidelity.summary), under min-psnr \(Reencoding.decimal(policy.minimumPSNR, 1)) dB")
        }
        return .turn(transform, fidelity)
    }

    /// How close the DCT-domain turn decodes to the original displayed with its orientation.
    static func turnFidelity(_ jpeg: [UInt8], orientation: Int, _ transform: LosslessJPEG.Transform) throws -> Fidelity {
        try turnedFidelity(original: jpeg, orientation: orientation, turned: LosslessJPEG.transform(jpeg, transform))
    }

    /// `turned` decoded against `original` decoded and displayed with its orientation (RGB, accurate DCT).
    static func turnedFidelity(original: [UInt8], orientation: Int, turned: [UInt8]) throws -> Fidelity {
        let before = try LosslessJPEG.decodeRGB(original)
        let after = try LosslessJPEG.decodeRGB(turned)
        let shown = PixelOrientation.apply(orientation, width: before.width, height: before.height, pixels: before.pixels, channels: 3)
        return try Fidelity.measure(Raster(width: shown.width, height: shown.height, layout: .rgb, pixels: shown.pixels),
                                    Raster(width: after.width, height: after.height, layout: .rgb, pixels: after.pixels))
    }

    /// Decoding the transformed image gives the original's pixels turned as the tag says.
    static func exact(_ jpeg: [UInt8], orientation: Int, _ transform: LosslessJPEG.Transform, tolerant: Bool) throws -> Bool {
        let turned = try LosslessJPEG.transform(jpeg, transform, tolerateWarnings: tolerant)
        let before = try LosslessJPEG.decodeRGB(jpeg, tolerateWarnings: tolerant)
        let after = try LosslessJPEG.decodeRGB(turned, tolerateWarnings: tolerant)
        return PixelOrientation.matches(orientation, width: before.width, height: before.height, pixels: before.pixels, channels: 3,
                                        turned: (after.width, after.height, after.pixels))
    }

    /// A small JPEG of the first `bandRows` MCU rows: the tables, the frame header with a smaller height and
    /// the start of the entropy-coded data. Only for single-scan sequential images (a progressive image's first
    /// scan is not the top of the picture); nil otherwise, or when the band would be the whole image anyway.
    static func band(_ input: any ByteSource, _ structure: JPEGStructure, _ frame: Frame) -> [UInt8]? {
        let scans = structure.segments.filter { $0.role == .scan }
        guard scans.count == 1, let scan = scans.first, let entropyEnd = scan.entropyEnd, frame.sequential else { return nil }
        let totalRows = (frame.height + frame.mcuHeight - 1) / frame.mcuHeight
        guard totalRows > bandRows * 2 else { return nil }
        let entropyStart = scan.offset + Int64(scan.length)
        let entropy = entropyEnd - entropyStart
        // Twice the band's share of the data, so the band is almost always complete; a short read only means
        // the decoder pads the band's end with blank blocks, the same on both sides of the comparison.
        let share = min(entropy, entropy * Int64(bandRows * 2) / Int64(totalRows) + 4096)
        var out: [UInt8] = [0xFF, 0xD8]
        do {
            for segment in structure.segments where segment.role == .structural && segment.offset < scan.offset {
                var bytes = try input.read(at: segment.offset, count: segment.length)
                if segment.offset == frame.segmentOffset {
                    let rows = bandRows * frame.mcuHeight
                    bytes[5] = UInt8(rows >> 8)
                    bytes[6] = UInt8(rows & 0xFF)
                }
                out += bytes
            }
            out += try input.read(at: scan.offset, count: scan.length)
            out += try input.read(at: entropyStart, count: Int(share))
        } catch {
            return nil
        }
        return out + [0xFF, 0xD9]
    }

    /// What the frame header says about the coded image's geometry.
    struct Frame: Equatable {
        var segmentOffset: Int64
        var marker: UInt8
        var width, height: Int
        /// Pixels per MCU: 8 × the largest sampling factor in each direction.
        var mcuWidth, mcuHeight: Int

        var sequential: Bool { marker == 0xC0 || marker == 0xC1 }

        static func read(_ input: any ByteSource, _ structure: JPEGStructure) throws -> Frame? {
            guard let sof = structure.segments.first(where: {
                (0xC0...0xCF).contains($0.marker) && ![0xC4, 0xC8, 0xCC].contains($0.marker)
            }), sof.payloadLength >= 6 else { return nil }
            let payload = try input.read(at: sof.payloadOffset, count: sof.payloadLength)
            let components = Int(payload[5])
            guard components >= 1, payload.count >= 6 + 3 * components else { return nil }
            var maxH = 1, maxV = 1
            for c in 0..<components {
                let sampling = payload[6 + 3 * c + 1]
                maxH = max(maxH, Int(sampling >> 4))
                maxV = max(maxV, Int(sampling & 0x0F))
            }
            // A single-component scan is not interleaved: its MCU is one 8×8 block whatever the factors say.
            if components == 1 { (maxH, maxV) = (1, 1) }
            let height = BigEndian.u16(payload, 1), width = BigEndian.u16(payload, 3)
            guard width > 0, height > 0 else { return nil }
            return Frame(segmentOffset: sof.offset, marker: sof.marker, width: width, height: height,
                         mcuWidth: 8 * maxH, mcuHeight: 8 * maxV)
        }

        /// libjpeg's `jtransform_perfect_transform`: which edges must be whole MCUs for each transform.
        func isPerfect(for transform: LosslessJPEG.Transform) -> Bool {
            let wholeWidth = width % mcuWidth == 0, wholeHeight = height % mcuHeight == 0
            switch transform {
            case .flipHorizontal, .rotate270: return wholeWidth
            case .flipVertical, .rotate90: return wholeHeight
            case .rotate180, .transverse: return wholeWidth && wholeHeight
            case .transpose: return true
            }
        }
    }
}

/// The band checks of the last few images, by the band's exact bytes: a clean decides on the input and its
/// verification's re-scan decides again on the output, whose band (tables, frame, the first entropy-coded bytes)
/// is byte for byte the input's, so the second check is a lookup instead of a transform and two decodes (issue 25:
/// the decision's result reused rather than recomputed). A hit needs the same bytes and orientation, so it can
/// only ever return what the check would.
enum BandMemo {
    struct Entry {
        var band: [UInt8]
        var orientation: Int
        var exact: Bool
    }

    /// Enough for every file in flight (`--jobs`) to find its own band again after its clean.
    static let capacity = 16
    private static let entries = Mutex<[Entry]>([])

    static func exact(_ band: [UInt8], orientation: Int, _ transform: LosslessJPEG.Transform) -> Bool {
        if let hit = lookup(band, orientation) { return hit }
        let result = (try? JPEGBake.exact(band, orientation: orientation, transform, tolerant: true)) == true
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeFirst() }
            entries.append(Entry(band: band, orientation: orientation, exact: result))
        }
        return result
    }

    private static func lookup(_ band: [UInt8], _ orientation: Int) -> Bool? {
        entries.withLock { entries in
            entries.last { $0.orientation == orientation && same($0.band, band) }?.exact
        }
    }

    private static func same(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a.count == b.count && a.withUnsafeBytes { x in b.withUnsafeBytes { y in memcmp(x.baseAddress!, y.baseAddress!, a.count) == 0 } }
    }
}
