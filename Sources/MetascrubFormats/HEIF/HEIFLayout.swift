// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// What an item is for, which decides how its fate is found.
enum HEIFItemRole: Equatable {
    /// The image a viewer shows; never removed.
    case primary
    /// An `Exif` item or an XMP `mime` item: itemised, kept, rebuilt or dropped entry by entry.
    case metadata
    /// An image with a `thmb` reference: a smaller copy of another image.
    case thumbnail
    /// An image with an `auxl` reference, classified by its `auxC` type.
    case auxiliary(AuxiliaryKind)
    /// A `tmap` derived image (ISO 21496-1 gain-map rendition).
    case toneMap
    /// Another image in its own right.
    case image
    /// A tile or other input of a derived image: it follows the images that use it.
    case input
    /// A `mime`/`uri ` item that is not XMP, or an item of a type this reader does not know.
    case other
}

enum AuxiliaryKind: String {
    case alpha, depth, gainmap, matte, other

    /// From an `auxC` aux_type URN (HEVC SEI numbering, MPEG-B CICP names, Apple's URNs).
    init(urn: String) {
        let u = urn.lowercased()
        if u.hasSuffix(":auxid:1") || u.hasSuffix(":alpha") || u.hasSuffix("auxiliary:alpha") {
            self = .alpha
        } else if u.hasSuffix(":auxid:2") || u.hasSuffix(":depth") || u.contains("depth") || u.contains("disparity") {
            self = .depth
        } else if u.contains("gainmap") {
            self = .gainmap
        } else if u.contains("matte") {
            self = .matte
        } else {
            self = .other
        }
    }
}

/// The HEIF scanner's parse, handed to the cleaner and verifier.
public struct HEIFLayout: Sendable {
    var format: String
    var top: [Box]
    /// Bytes after the last top-level box.
    var trailer: Range<Int64>?
    var metaIndex: Int
    var meta: HEIFMeta
    var roles: [UInt32: HEIFItemRole] = [:]
    /// Bytes of each item this file holds (absent: external or built from other items).
    var data: [UInt32: ItemData] = [:]
    /// Top-level boxes holding bytes of construction-method-0 items (usually the `mdat`s).
    var dataBoxes: Set<Int> = []
    /// The metadata item (index into the scan's items) standing for each HEIF item with a role of its own.
    var itemOwner: [UInt32: Int] = [:]
    /// Itemised Exif and XMP items.
    var embedded: [UInt32: EmbeddedMetadata] = [:]
    /// Item property (1-based `ipco` index) → metadata item.
    var propertyOwner: [Int: Int] = [:]
    /// Top-level box index → metadata item.
    var boxOwner: [Int: Int] = [:]
    /// Top-level `uuid` XMP boxes, itemised.
    var boxEmbedded: [Int: EmbeddedMetadata] = [:]
    /// `meta` child index → metadata item (`xml `, non-empty `free`, unknown boxes).
    var metaChildOwner: [Int: Int] = [:]
    /// Bytes inside data boxes that no item refers to: the metadata item for those that are not zero padding.
    var unreferenced: [(range: Range<Int64>, item: Int?)] = []
    var trailerItem: Int?
    /// Decoded small properties: `auxC` URNs, `ispe` sizes, `colr` colour types, by 1-based `ipco` index.
    var auxiliaryTypes: [Int: String] = [:]
    var imageSizes: [Int: (width: UInt32, height: UInt32)] = [:]
    var colourTypes: [Int: FourCC] = [:]
    /// The file has tracks (`moov`): an image sequence, which this remuxer does not rewrite.
    var hasMovie = false
    /// Free text and slack in structure boxes (`HEIFStructureText`): the item and the box as written without it.
    var ftypText: (item: Int, plain: [UInt8])?
    var hdlrText: (item: Int, plain: [UInt8])?
    var dinfText: (item: Int, plain: [UInt8])?
    /// Items whose `infe` carries a name or bytes after its fields → the metadata item standing for them.
    var nameOwner: [UInt32: Int] = [:]

    var primaryID: UInt32 { meta.primaryID }

    /// The URN of an item's `auxC` property.
    func auxiliaryType(of id: UInt32) -> String? {
        meta.propertyBoxes(of: id).lazy.compactMap { auxiliaryTypes[$0.index] }.first
    }

    /// Width and height from an item's `ispe` property.
    func imageSize(of id: UInt32) -> (width: UInt32, height: UInt32)? {
        meta.propertyBoxes(of: id).lazy.compactMap { imageSizes[$0.index] }.first
    }

    /// The primary image and everything it is derived from: never removed.
    var protectedItems: Set<UInt32> {
        var out: Set<UInt32> = [primaryID]
        var queue = [primaryID]
        while let id = queue.popLast() {
            for input in meta.links.targets(of: id, ItemReferenceBox.derivedImage) where out.insert(input).inserted {
                queue.append(input)
            }
        }
        return out
    }
}
