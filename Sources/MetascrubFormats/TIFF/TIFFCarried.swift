// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// What a TIFF converted to JPEG/PNG carries besides pixels (issue 16): taken from the source already cleaned
/// by the TIFF handler and verified, so the policy decided every entry before it gets here.
public enum TIFFCarried {
    /// The first page's XMP packet, and an Exif block (TIFF header, IFD0 with the page's metadata entries, its
    /// Exif and GPS IFDs) in the file's byte order; nil for either when there is none. Image structure and
    /// strips, IPTC, Photoshop resources, the ICC profile (carried by the encoder) and further images are left out.
    public static func metadata(of cleaned: [UInt8]) throws -> (exif: [UInt8]?, xmp: [UInt8]?) {
        let source = MemoryByteSource(cleaned)
        let scan = try TIFFScanner.scan(source, options: ScanOptions())
        let layout = scan.layout
        guard let page = layout.chain.first else { return (nil, nil) }
        var xmp: [UInt8]?
        for (entry, fate) in zip(layout.nodes[page].ifd.entries, layout.nodes[page].fates) {
            if case .xmp = fate { xmp = try layout.structure.bytes(source, entry) }
        }
        let elsewhere = Set(scan.items.indices.filter { i in
            let key = scan.items[i].key
            return key == "icc:profile" || key.hasPrefix("photoshop:") || key.hasPrefix("tiff:IFD") || key == "tiff:SubIFD"
        })
        var writer = TIFFWriter(layout: layout, source: source, keeps: { !elsewhere.contains($0) })
        writer.metadataOnly = true
        let plan = try writer.build()
        guard writer.ifds.contains(where: { !$0.entries.isEmpty }) else { return (nil, xmp) }
        let sink = MemoryOutputSink()
        // Bytes for a rebuilt record inside another container, whose own plan is the ledger.
        _ = try plan.write(from: source, to: sink)
        return (sink.bytes, xmp)
    }
}
