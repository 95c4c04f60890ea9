// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubFormats
import MetascrubNative

/// An image encoded again and measured against the original's displayed render: what both re-encode paths
/// (conversion, the orientation bake) hand to the report.
struct ReencodedImage {
    var bytes: [UInt8]
    /// The output's format id ("jpeg", "png", "webp", "tiff").
    var format: String
    var decoder: String
    var encoder: String
    var settings: String
    var fidelity: Fidelity
}

/// What every re-encode shares (`ImageConverter`, `OrientationReencoder`): the ladder of encoder settings tried
/// until one is close enough, the checks the encoded bytes pass in memory, and the write of exactly those bytes.
/// Nothing reaches the file system unless the fidelity and the re-scan passed.
struct VerifiedReencode {
    var options: ProcessingOptions
    /// "converted" or "re-encoded", for messages.
    var noun: String

    var threshold: Double { options.policy.minimumPSNR }

    /// One step of a ladder: the encoded bytes, their fidelity, and whether that is good enough.
    struct Attempt {
        var bytes: [UInt8]
        var fidelity: Fidelity
        var passes: Bool
    }

    /// The first step whose attempt passes; throws (`tooFar`, with the last figure) when none does.
    func firstPassing<Step>(_ steps: [Step], report: inout FileReport,
                            _ attempt: (Step) throws -> Attempt) throws -> (step: Step, attempt: Attempt) {
        var last: Fidelity?
        for step in steps {
            let result = try attempt(step)
            if result.passes { return (step, result) }
            last = result.fidelity
        }
        throw tooFar(last, report: &report)
    }

    /// The failure for a result too far from the original, with the report's verification filled in.
    func tooFar(_ fidelity: Fidelity?, report: inout FileReport) -> MetascrubError {
        let figure = fidelity?.summary ?? "not measured"
        report.verification = Verification(rescan: .skipped, content: "decoded pixels against the original's displayed render: \(figure)",
                                           contentResult: .failed)
        return .verificationFailed(reason: "\(noun) image too far from the original: \(figure), policy min-psnr \(Reencoding.decimal(threshold, 1)) dB")
    }

    /// Commits the verified bytes (a file: temp file, read back, attributes, rename), and records the size and
    /// digest of what was written.
    func write(_ image: ReencodedImage, to destination: any CleanDestination, report: inout FileReport) throws {
        try destination.commit(verified: image.bytes, noun: noun)
        report.output = destination.name
        report.bytesAfter = Int64(image.bytes.count)
        if options.digests { report.sha256After = try Hashing.sha256(MemoryByteSource(image.bytes)) }
    }

    /// The report's account of the re-encode.
    func reencoding(_ image: ReencodedImage, reason: String, from source: String, notCarried: [String] = []) -> Reencoding {
        Reencoding(reason: reason, from: source, to: image.format, decoder: image.decoder, encoder: image.encoder, settings: image.settings,
                   psnr: image.fidelity.psnr, ssim: image.fidelity.ssim, minimumPSNR: threshold, notCarried: notCarried)
    }
}
