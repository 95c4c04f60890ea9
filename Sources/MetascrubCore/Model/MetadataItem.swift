// SPDX-License-Identifier: GPL-3.0-or-later

/// One piece of metadata a scanner found in a file.
///
/// Keys are namespaced by the metadata family that holds them (`exif:GPSLatitude`, `xmp:dc:rights`,
/// `iptc:CopyrightNotice`, `jpeg:trailer`, `icc:profile`), so a policy can name them whatever the container.
public struct MetadataItem: Sendable, Hashable, Codable {
    public var key: String
    public var category: Category
    /// Where it is inside the container, as a path: `APP1#2/EXIF/GPS/0x0002`.
    public var location: String
    /// Byte offset of the item (or of the block holding it) in the file.
    public var offset: Int64?
    /// Size in bytes of the item's value or block.
    public var length: Int64?
    /// A short rendering of the value. Printed only when the user asks with `--show-values`.
    public var value: String?
    /// A description that never contains the value ("JPEG thumbnail, 4 KB").
    public var detail: String?
    /// The scanner does not know what this is (an unknown segment, chunk or box).
    public var isUnknown: Bool
    /// Index, in the same scan's item list, of the block this item lives in (a maker-note entry inside the
    /// maker note, an XMP property inside the XMP packet). A block is removed when any item inside it is.
    public var parent: Int?
    /// Set on a whole embedded file (cover art, an image after the end of another) whose inside was scanned by its
    /// own handler: that handler's format id. Its items follow as children, and the policy can `clean` it.
    public var embeddedFormat: String?
    /// Its block is written again without it (a field of an XMP structure): removing it cleans the block inside
    /// instead of removing the whole block.
    public var separable = false

    public init(
        key: String, category: Category, location: String, offset: Int64? = nil, length: Int64? = nil,
        value: String? = nil, detail: String? = nil, isUnknown: Bool = false, parent: Int? = nil
    ) {
        self.key = key
        self.category = category
        self.location = location
        self.offset = offset
        self.length = length
        self.value = value
        self.detail = detail
        self.isUnknown = isUnknown
        self.parent = parent
    }

    enum CodingKeys: String, CodingKey {
        case key, category, location, offset, length, value, detail, isUnknown, parent, embeddedFormat
    }
}
