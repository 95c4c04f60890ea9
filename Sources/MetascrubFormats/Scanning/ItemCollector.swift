// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// What every scanner accumulates while it walks a file: the items in order (an item's index is how the
/// layout and the plan refer to it), the notes, and the value gate, applied here once: a value is rendered
/// only for `--show-values`, so scanners hand it over lazily.
struct ItemCollector {
    let options: ScanOptions
    var items: [MetadataItem] = []
    var notes: [Note] = []
    /// Files inside this one scanned by their own handlers (`embeddedFile`).
    var embedded: [EmbeddedFile] = []
    /// C2PA manifest stores and whether their hard binding holds (`c2pa`).
    var provenance: [ProvenanceManifest] = []

    init(_ options: ScanOptions) { self.options = options }

    /// Index the next item will get.
    var next: Int { items.count }

    /// Adds one item and returns its index.
    @discardableResult
    mutating func add(
        _ key: String, _ category: Category, location: String, offset: Int64? = nil, length: Int64? = nil,
        value: @autoclosure () -> String? = nil, detail: String? = nil, unknown: Bool = false, parent: Int? = nil
    ) -> Int {
        items.append(MetadataItem(key: key, category: category, location: location, offset: offset, length: length,
                                  value: options.includeValues ? value() : nil, detail: detail, isUnknown: unknown, parent: parent))
        return items.count - 1
    }

    /// Adds one item over a byte range of the file and returns its index.
    @discardableResult
    mutating func add(
        _ key: String, _ category: Category, _ range: Range<Int64>, location: String, value: @autoclosure () -> String? = nil,
        detail: String? = nil, unknown: Bool = false, parent: Int? = nil
    ) -> Int {
        add(key, category, location: location, offset: range.lowerBound, length: Int64(range.count), value: value(),
            detail: detail, unknown: unknown, parent: parent)
    }

    /// The item standing for bytes after the container's end (`gif:trailer`, `avi:trailer`); returns its index.
    mutating func trailer(_ key: String, _ range: Range<Int64>, in source: any ByteSource, location: String, after what: String) throws -> Int {
        items.append(try Trailer.item(key: key, range: range, in: source, location: location, after: what))
        return items.count - 1
    }

    mutating func note(_ note: Note) { notes.append(note) }

    /// The properties of an XMP packet, each an item; returns the item → property map a rebuild needs.
    mutating func xmp(_ packet: [UInt8], location: String, origin: Int64) -> [Int: String] {
        XMPItems.itemise(packet: packet, location: location, origin: origin, options: options, into: &items, notes: &notes)
    }

    /// The entries of an EXIF block, each an item; nil (and one unknown item) when the block does not parse.
    mutating func exif(_ bytes: [UInt8], location: String, origin: Int64) -> ExifPayload? {
        ExifPayload.itemise(bytes, origin: origin, location: location, options: options, into: &items, notes: &notes)
    }

    /// Hands both lists to an itemiser that appends to them (XMP, EXIF, ID3): two inout arguments taken from
    /// one collector at the call site would overlap.
    mutating func lists<T>(_ body: (inout [MetadataItem], inout [Note]) throws -> T) rethrows -> T {
        try body(&items, &notes)
    }

    /// The scan handed to the pipeline.
    func result<Layout>(_ layout: Layout) -> ScanResult<Layout> {
        ScanResult(items: items, notes: notes, layout: layout, embedded: embedded, provenance: provenance)
    }
}
