// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// What the raw scanner found, for an in-place clean: every removable item and how it goes without moving a
/// byte of anything else.
public struct RawTIFFLayout: Sendable {
    enum Action: Sendable {
        /// Take the entry out of its IFD (the table is rewritten where it is, one entry shorter) and zero what
        /// it pointed to: its out-of-line value, or a whole sub-IFD with its values. `order`: the IFD's byte
        /// order (nil: the file's; maker notes may differ).
        case drop(ifd: Int64, tag: UInt16, zero: [Range<Int64>], order: ByteOrder? = nil)
        /// Overwrite with zeros, same length (maker-note fields, metadata segments of embedded JPEGs).
        case blank(Range<Int64>)
        /// Overwrite with these bytes, same length (a Nikon key field's key-equivalent value, `NikonKey`).
        case overwrite(Range<Int64>, [UInt8])
    }

    struct XMPBlock: Sendable {
        /// The IFD entry holding the packet; nil for a packet stored on its own (CR3's XMP box), which is
        /// emptied in place instead of dropped.
        var ifd: Int64?
        var tag: UInt16
        var value: Range<Int64>
        var packet: [UInt8]
        var keys: [Int: String]
    }

    var structure: TIFFStructure
    var actions: [Int: Action] = [:]
    var xmp: [XMPBlock] = []
    /// Image data (strips, tiles, embedded JPEGs) that must come out byte-identical apart from `holes`.
    var imageData: [Range<Int64>] = []
    /// Ranges the cleaner may overwrite inside `imageData` (metadata segments of embedded JPEGs).
    var holes: [Range<Int64>] = []
    /// Why LibRaw does not recognise the file, when it does not (set by `RawTIFFFormat.scan`): the clean is then
    /// proven byte by byte only.
    var undecodable: String?
    /// Items the converter needs, kept whatever the policy says, with the reason (`RawTIFFFormat.settle`).
    var required: [Int: String] = [:]
    /// Make and Model: removed where LibRaw decodes the raw identically without them (`RawDecodeBisection`),
    /// kept with their reason where that cannot be tested.
    var decoderItems: Set<Int> = []
    /// Maker-note fields of a maker note that is itself an item: their actions apply only while the note stays.
    var partOf: [Int: Int] = [:]
    /// Nikon maker notes whose enciphered blocks follow their key entries (`NikonRecipher`).
    var nikon: [NikonRecipher] = []
    /// Where the sensor data is, as far as the structure tells (for notes).
    var rawData: Range<Int64>?
    /// Image data the structure points to lies past the end of the file: LibRaw would decode whatever memory holds
    /// there, so the raw is treated as undecodable (`RawTIFFFormat.fingerprint`).
    var truncated = false

    /// This layout with every offset moved by `base` and every item index by `items` (a TIFF found inside
    /// another container, scanned through a window that starts at `base`).
    func shifted(by base: Int64, items: Int) -> RawTIFFLayout {
        func move(_ r: Range<Int64>) -> Range<Int64> { r.lowerBound + base..<r.upperBound + base }
        var result = RawTIFFLayout(structure: structure)
        for (item, action) in actions {
            switch action {
            case .drop(let ifd, let tag, let zero, let order):
                result.actions[item + items] = .drop(ifd: ifd + base, tag: tag, zero: zero.map(move), order: order ?? structure.order)
            case .blank(let r):
                result.actions[item + items] = .blank(move(r))
            case .overwrite(let r, let bytes):
                result.actions[item + items] = .overwrite(move(r), bytes)
            }
        }
        result.xmp = xmp.map { XMPBlock(ifd: $0.ifd.map { $0 + base }, tag: $0.tag, value: move($0.value), packet: $0.packet,
                                        keys: Dictionary(uniqueKeysWithValues: $0.keys.map { ($0.key + items, $0.value) })) }
        result.required = Dictionary(uniqueKeysWithValues: required.map { ($0.key + items, $0.value) })
        result.decoderItems = Set(decoderItems.map { $0 + items })
        result.partOf = Dictionary(uniqueKeysWithValues: partOf.map { ($0.key + items, $0.value + items) })
        result.nikon = nikon.map { $0.shifted(by: base, items: items) }
        result.imageData = imageData.map(move)
        result.rawData = rawData.map(move)
        result.holes = holes.map(move)
        result.truncated = truncated
        return result
    }

    mutating func absorb(_ other: RawTIFFLayout) {
        actions.merge(other.actions) { a, _ in a }
        xmp += other.xmp
        nikon += other.nikon
        imageData += other.imageData
        required.merge(other.required) { a, _ in a }
        decoderItems.formUnion(other.decoderItems)
        partOf.merge(other.partOf) { a, _ in a }
        rawData = rawData ?? other.rawData
        holes += other.holes
        truncated = truncated || other.truncated
    }
}
