// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// Puts a re-encoded image (a single-image TIFF from libtiff) into an already cleaned TIFF: the first page's
/// size, strip layout and strips are the new image's; every other entry, IFD and value stays as the cleaned
/// file has it, written again by `TIFFWriter`. Container writing is ours; libtiff only coded the strips.
public enum TIFFImageSplice {
    /// Entries that describe the coded strips: taken from the re-encoded image.
    static let imageTags: [UInt16] = [256, 257, 278, 279]

    /// `cleaned` with its first page's image replaced by `encoded`'s, which must have the same byte order and
    /// coding (bit depth, samples, compression, predictor). `transposed`: the image was turned a quarter,
    /// so X and Y resolution trade places.
    public static func replacingImage(in cleaned: [UInt8], with encoded: [UInt8], transposed: Bool) throws -> [UInt8] {
        // One source holds both files, so the new strips are ranges the writer copies like any other.
        let source = MemoryByteSource(cleaned + encoded)
        let scan = try TIFFScanner.scan(source, options: ScanOptions())
        let layout = scan.layout
        guard let page = layout.chain.first else {
            throw MetascrubError.verificationFailed(reason: "the cleaned TIFF has no image to replace")
        }

        let image = MemoryByteSource(encoded)
        let structure = try TIFFStructure.header(image)
        guard structure.order.bigEndian == layout.structure.order.bigEndian else {
            throw MetascrubError.verificationFailed(reason: "the re-encoded TIFF image has another byte order")
        }
        var visited = Set<Int64>(), notes: [Note] = []
        let ifd = try structure.readIFD(image, at: structure.firstIFD, path: "re-encoded IFD0", visited: &visited, notes: &notes)
        var entries: [UInt16: TIFFWriter.Entry] = [:]
        for tag in imageTags {
            guard let entry = ifd.entry(tag) else {
                throw MetascrubError.verificationFailed(reason: "the re-encoded TIFF image has no tag \(tag)")
            }
            entries[tag] = TIFFWriter.Entry(tag: tag, type: entry.type, count: entry.count, value: .bytes(try structure.bytes(image, entry)))
        }
        guard let offsetsEntry = ifd.entry(273), let offsets = try structure.integers(image, offsetsEntry),
              let countsEntry = ifd.entry(279), let counts = try structure.integers(image, countsEntry), offsets.count == counts.count else {
            throw MetascrubError.verificationFailed(reason: "the re-encoded TIFF image has no strips")
        }
        let shift = Int64(cleaned.count)
        let strips = try zip(offsets, counts).map { offset, count -> Range<Int64> in
            guard offset + count <= UInt64(encoded.count) else {
                throw MetascrubError.verificationFailed(reason: "a re-encoded strip lies outside the encoded image")
            }
            return shift + Int64(offset)..<shift + Int64(offset + count)
        }
        entries[273] = TIFFWriter.Entry(tag: 273, type: 4, count: UInt64(strips.count), value: .data(strips))

        let own = layout.nodes[page].ifd
        if transposed, let x = own.entry(282), let y = own.entry(283) {
            entries[282] = TIFFWriter.Entry(tag: 282, type: y.type, count: y.count, value: .bytes(try layout.structure.bytes(source, y)))
            entries[283] = TIFFWriter.Entry(tag: 283, type: x.type, count: x.count, value: .bytes(try layout.structure.bytes(source, x)))
        }

        var writer = TIFFWriter(layout: layout, source: source, keeps: { _ in true })
        writer.replacement = (page, entries)
        let sink = MemoryOutputSink()
        // Bytes for a rebuilt record inside another container, whose own plan is the ledger.
        _ = try writer.build().write(from: source, to: sink)
        return sink.bytes
    }
}
