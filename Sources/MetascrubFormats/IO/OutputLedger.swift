// SPDX-License-Identifier: GPL-3.0-or-later

/// Why a range of a cleaned file may be there. Every piece of an `OutputPlan` carries one, so the verifier can
/// hold the output to an allow-list: nothing leaves because it merely was not recognised as metadata.
public enum LedgerReason: Sendable, Equatable {
    /// Coded media data (entropy-coded scans, samples, IDAT, coded items): copied unchanged, and the content check
    /// must declare the source range among those it compared byte for byte (`ContentCheck.identical`).
    case codedData
    /// Structure the handler wrote from parsed fields, or copied after validating it field by field, length-exact,
    /// with nothing after the last field it understands.
    case structure
    /// An item the policy kept, by its index in the scan's items: a copied range must lie inside that item.
    case keptItem(Int)
    /// Zero bytes (alignment, same-size blanking): the verifier checks they are zero.
    case padding
}

/// A cleaned file as the ranges it is made of, each with its reason (`LedgerReason`), in output order. It is the
/// record of an `OutputPlan`, handed to the verifier in `CleanResult.ledger`, which checks that the entries cover the
/// output exactly and that each reason holds (`LedgerCoverage` in the verifier).
///
/// Handlers that do not write through `OutputPlan` hand back no ledger: the exiv2 bridge (raw previews written by
/// the library), the libav remux (muxers write and patch their own headers), and re-encoded outputs (conversion,
/// orientation re-encode). Their output is proven instead by the re-scan with the policy settled as for the original
/// (nothing it removes is found), the content check (decoded frames/pixels compared with the original's) and the
/// residue proof (no removed item's bytes anywhere outside kept items).
public struct OutputLedger: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        /// Where the bytes are in the output.
        public var output: Range<Int64>
        /// Where they were copied from in the source; nil for bytes the handler wrote.
        public var source: Range<Int64>?
        public var reason: LedgerReason

        public init(output: Range<Int64>, source: Range<Int64>?, reason: LedgerReason) {
            self.output = output
            self.source = source
            self.reason = reason
        }
    }

    public private(set) var entries: [Entry] = []
    /// The output size the entries add up to.
    public private(set) var size: Int64 = 0

    public init() {}

    public init(entries: [Entry]) {
        for entry in entries { append(entry) }
    }

    /// Adds the next range of the output; an entry that continues the last one with the same reason (and, for a
    /// copy, the next source bytes) is merged into it.
    mutating func append(_ entry: Entry) {
        size = max(size, entry.output.upperBound)
        if let last = entries.last, last.reason == entry.reason, last.output.upperBound == entry.output.lowerBound {
            switch (last.source, entry.source) {
            case (nil, nil):
                entries[entries.count - 1].output = last.output.lowerBound..<entry.output.upperBound
                return
            case (let a?, let b?) where a.upperBound == b.lowerBound:
                entries[entries.count - 1].output = last.output.lowerBound..<entry.output.upperBound
                entries[entries.count - 1].source = a.lowerBound..<b.upperBound
                return
            default: break
            }
        }
        entries.append(entry)
    }
}
