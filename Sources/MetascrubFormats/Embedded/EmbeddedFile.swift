// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// A whole file inside another one (cover art in ID3 `APIC`, MP4 `covr` or FLAC `PICTURE`, a JPEG appended
/// after a JPEG's EOI, a smart object's embedded file) scanned by its own handler, found in the registry by its
/// magic bytes. Its items are listed among the container's as children of the file's item, located
/// `APIC#1 > APP1#1/EXIF/GPS/0x0002`, so the policy decides them like any other; under `clean` the container
/// splices in the file as its own handler cleans it (`ScanResult.cleanedEmbeddedFiles`), and because the
/// container's re-scan itemises the cleaned file again, verification proves the inner items gone.
///
/// One mechanism for every container: a container finds the file's bytes and calls
/// `ItemCollector.embeddedFile`, and at clean time puts the cleaned bytes where the file was, fixing its own
/// lengths, offsets and checksums.
public struct EmbeddedFile: Sendable {
    /// Files inside files inside files: deeper ones are not looked into (and so cannot be kept cleaned).
    public static let maxDepth = 3
    /// Larger embedded files are not read into memory to be looked into.
    static let sizeLimit = 64 << 20

    /// The whole file's item in the container's scan.
    let item: Int
    let format: MediaFormat
    let bytes: [UInt8]
    let scan: FormatScan
    /// Where its items are in the container's list, in the embedded scan's order.
    let children: Range<Int>

    /// The container's decisions on the file's items, as decisions on the embedded scan's own items.
    func findings(_ container: [Finding]) -> [Finding] {
        zip(scan.items, container[children]).map { item, decided in
            Finding(item: item, disposition: decided.disposition, rule: decided.rule, outcome: decided.outcome, reason: decided.reason)
        }
    }

    /// The file cleaned by its own handler under the container's decisions, and verified by it (the decoded or
    /// coded content compared as for a file of its own). Throws when it cannot be, so nothing is written.
    func cleaned(_ plan: CleanPlan, location: String) throws -> [UInt8] {
        let source = MemoryByteSource(bytes)
        let inner = CleanPlan(findings: findings(plan.findings), policy: plan.policy, layout: plan.layout)
        let sink = MemoryOutputSink()
        let result = try scan.clean(source, plan: inner, to: sink)
        let output = MemoryByteSource(sink.bytes)
        let check: ContentCheck
        do {
            check = try scan.rescan(output).verifyContent(original: source, cleaned: output, result: result)
        } catch {
            throw MetascrubError.verificationFailed(reason: "the cleaned \(format.name) at \(location) does not parse: \(error)")
        }
        guard check.passed else {
            throw MetascrubError.verificationFailed(reason: "the cleaned \(format.name) at \(location) changed: \(check.detail ?? check.method)")
        }
        return sink.bytes
    }
}

extension ItemCollector {
    /// Looks into `bytes`, the whole file that item `item` stands for, with the handler the registry finds by its
    /// magic bytes, and lists its items as the item's children (offsets in this file when `origin` says where the
    /// file starts here; nil when its bytes are not stored as they are, e.g. unsynchronised). Only images are
    /// looked into: a video after a photo (a motion photo) is located by offsets a changed size would break.
    /// Returns whether the file can be kept cleaned; when not (no handler, too deep, does not parse), the
    /// policy's `uncleanable` decides what a `clean` of it becomes.
    @discardableResult
    mutating func embeddedFile(_ bytes: [UInt8], item: Int, origin: Int64?) -> Bool {
        let location = items[item].location
        guard options.depth < EmbeddedFile.maxDepth, bytes.count <= EmbeddedFile.sizeLimit,
              let entry = FormatRegistry.detect(Array(bytes.prefix(4096))), entry.format.kind == .image, let handler = entry.handler else {
            return false
        }
        var nested = options
        nested.depth += 1
        let scan: FormatScan
        do {
            scan = try handler.scan(MemoryByteSource(bytes), options: nested)
        } catch {
            notes.append(Note(.warning, code: "embedded-unscanned",
                              "the \(entry.format.name) at \(location) could not be scanned (\(error)); it cannot be kept cleaned", offset: origin))
            return false
        }
        let base = items.count
        for child in scan.items {
            var moved = child
            moved.location = "\(location) > \(child.location)"
            moved.offset = origin.flatMap { start in child.offset.map { start + $0 } }
            moved.parent = child.parent.map { $0 + base } ?? item
            items.append(moved)
        }
        for note in scan.notes {
            notes.append(Note(note.severity, code: note.code, "\(location): \(note.message)",
                              offset: origin.flatMap { start in note.offset.map { start + $0 } }))
        }
        items[item].embeddedFormat = entry.format.id
        embedded.append(EmbeddedFile(item: item, format: entry.format, bytes: bytes, scan: scan, children: base..<items.count))
        return true
    }
}

extension ItemCollector {
    /// `embeddedFile` for bytes stored as they are at `range` of `source`, read only when they start like an image.
    @discardableResult
    mutating func embeddedFile(in source: any ByteSource, _ range: Range<Int64>, item: Int) throws -> Bool {
        guard range.count >= 8, range.count <= EmbeddedFile.sizeLimit else { return false }
        let head = try source.read(at: range.lowerBound, count: Int(min(Int64(range.count), 4096)))
        guard FormatRegistry.detect(head)?.format.kind == .image else { return false }
        return embeddedFile(try source.read(at: range.lowerBound, count: Int(range.count)), item: item, origin: range.lowerBound)
    }
}

extension ScanResult {
    /// Every embedded file the plan keeps cleaned, cleaned by its own handler under the same policy and verified:
    /// item → the cleaned file's bytes, for the container to put where the file was.
    func cleanedEmbeddedFiles(_ plan: CleanPlan) throws -> [Int: [UInt8]] {
        var cleaned: [Int: [UInt8]] = [:]
        for file in embedded where plan.findings.indices.contains(file.item) && plan.cleans(file.item) {
            cleaned[file.item] = try file.cleaned(plan, location: items[file.item].location)
        }
        return cleaned
    }

    /// The container's settled decisions with each embedded file's own handler settling that file's items (an
    /// orientation it cannot bake stays, with its reason), and files left with nothing to remove simply kept.
    func settleEmbedded(_ findings: [Finding], policy: Policy) throws -> [Finding] {
        guard !embedded.isEmpty else { return findings }
        var settled = findings
        for file in embedded where settled.indices.contains(file.item) && settled[file.item].disposition == .clean {
            let inner = try file.scan.settle(file.findings(settled), input: MemoryByteSource(file.bytes), policy: policy)
            for (k, decided) in inner.enumerated() {
                settled[file.children.lowerBound + k].disposition = decided.disposition
                settled[file.children.lowerBound + k].reason = decided.reason
            }
        }
        return Policy.keepingCleanFiles(settled)
    }
}
