// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore
import MetascrubFormats

/// Why a cleaned output failed the ledger check, and where in the output.
struct LedgerViolation: Error, Equatable, CustomStringConvertible {
    enum Kind: Equatable {
        /// The entries add up to another size than the output's.
        case sizeMismatch(ledger: Int64, output: Int64)
        /// An entry does not start where the previous one ended (a gap or an overlap).
        case notContiguous
        /// A copy from outside the original.
        case sourceOutside(Range<Int64>)
        /// Labelled as a kept item that the policy does not keep (or that the scan does not have).
        case itemNotKept(item: Int)
        /// Labelled as a kept item, copied from outside that item's bytes.
        case outsideKeptItem(item: Int, source: Range<Int64>)
        /// Labelled as coded data the content check did not compare.
        case undeclaredCodedData(source: Range<Int64>)
        /// Labelled as padding, not all zero.
        case paddingNotZero
    }

    /// Output offset of the first byte the violation concerns.
    var offset: Int64
    var kind: Kind

    var description: String {
        let what = switch kind {
        case .sizeMismatch(let ledger, let output): "the plan accounts for \(ledger) bytes of a \(output)-byte output"
        case .notContiguous: "the plan's ranges do not follow each other"
        case .sourceOutside(let r): "copied from \(r.lowerBound)..<\(r.upperBound), outside the original"
        case .itemNotKept(let item): "labelled as kept item #\(item), which the policy does not keep"
        case .outsideKeptItem(let item, let r):
            "copied from \(r.lowerBound)..<\(r.upperBound), outside kept item #\(item)"
        case .undeclaredCodedData(let r):
            "copied from \(r.lowerBound)..<\(r.upperBound) as coded data the content check did not compare"
        case .paddingNotZero: "padding that is not zero"
        }
        return "output byte \(offset): \(what)"
    }
}

extension LedgerViolation {
    /// The description with the key of the item it concerns, if any.
    func named(_ items: [MetadataItem]) -> String {
        switch kind {
        case .itemNotKept(let item), .outsideKeptItem(let item, _):
            return items.indices.contains(item) ? "\(self) (\(items[item].key))" : "\(self)"
        default:
            return "\(self)"
        }
    }
}

/// The allow-list check of a cleaned output against its plan's ledger (`OutputLedger`): the entries cover the
/// output exactly, and each entry's reason holds — a kept item's bytes come from inside an item the policy kept,
/// coded data from ranges the content check compared byte for byte, padding is zero. Structure is whatever the
/// handler wrote or validated field by field; the re-scan and the residue proof check it.
struct LedgerCoverage {
    var items: [MetadataItem]
    var findings: [Finding]
    /// Original ranges the content check compared byte for byte (`ContentCheck.identical`).
    var compared: [Range<Int64>]

    func check(_ ledger: OutputLedger, original: any ByteSource, cleaned: any ByteSource) throws {
        var at: Int64 = 0
        let declared = compared.union()
        for entry in ledger.entries {
            guard entry.output.lowerBound == at else {
                throw LedgerViolation(offset: min(at, entry.output.lowerBound), kind: .notContiguous)
            }
            at = entry.output.upperBound
            if let source = entry.source, source.lowerBound < 0 || source.upperBound > original.size {
                throw LedgerViolation(offset: entry.output.lowerBound, kind: .sourceOutside(source))
            }
            switch entry.reason {
            case .structure: continue
            case .padding:
                if let nonZero = try Self.firstNonZero(cleaned, entry.output) {
                    throw LedgerViolation(offset: nonZero, kind: .paddingNotZero)
                }
            case .keptItem(let item):
                guard items.indices.contains(item), findings.indices.contains(item),
                      findings[item].disposition == .keep else {
                    throw LedgerViolation(offset: entry.output.lowerBound, kind: .itemNotKept(item: item))
                }
                // Bytes the handler wrote for a kept item (re-serialised) are checked by the re-scan and residue proof.
                guard let source = entry.source else { continue }
                guard let offset = items[item].offset, let length = items[item].length,
                      offset <= source.lowerBound, source.upperBound <= offset + length else {
                    throw LedgerViolation(offset: entry.output.lowerBound,
                                          kind: .outsideKeptItem(item: item, source: source))
                }
            case .codedData:
                guard let source = entry.source else {
                    throw LedgerViolation(offset: entry.output.lowerBound,
                                          kind: .undeclaredCodedData(source: entry.output))
                }
                if let missing = Self.firstUncovered(source, by: declared) {
                    throw LedgerViolation(offset: entry.output.lowerBound + (missing - source.lowerBound),
                                          kind: .undeclaredCodedData(source: source))
                }
            }
        }
        guard at == cleaned.size, ledger.size == cleaned.size else {
            throw LedgerViolation(offset: min(at, cleaned.size), kind: .sizeMismatch(ledger: at, output: cleaned.size))
        }
    }

    /// The first offset of `range` outside `union` (sorted, merged), or nil when it lies wholly inside.
    static func firstUncovered(_ range: Range<Int64>, by union: [Range<Int64>]) -> Int64? {
        guard !range.isEmpty else { return nil }
        var lo = 0, hi = union.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if union[mid].upperBound <= range.lowerBound { lo = mid + 1 } else { hi = mid }
        }
        guard lo < union.count, union[lo].lowerBound <= range.lowerBound else { return range.lowerBound }
        return union[lo].upperBound >= range.upperBound ? nil : union[lo].upperBound
    }

    private static func firstNonZero(_ source: any ByteSource, _ range: Range<Int64>) throws -> Int64? {
        var at = range.lowerBound
        while at < range.upperBound {
            let n = Int(min(range.upperBound - at, 1 << 20))
            let bytes = try source.read(at: at, count: n)
            if let i = bytes.firstIndex(where: { $0 != 0 }) { return at + Int64(i) }
            at += Int64(n)
        }
        return nil
    }
}
