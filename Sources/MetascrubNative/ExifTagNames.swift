import CExif

/// The IFDs of a TIFF/EXIF structure, as libexif distinguishes them.
public enum ExifIFDKind: Sendable, Hashable, CaseIterable {
    case ifd0, ifd1, exif, gps, interoperability

    var libexif: ExifIfd {
        switch self {
        case .ifd0: return EXIF_IFD_0
        case .ifd1: return EXIF_IFD_1
        case .exif: return EXIF_IFD_EXIF
        case .gps: return EXIF_IFD_GPS
        case .interoperability: return EXIF_IFD_INTEROPERABILITY
        }
    }
}

/// EXIF tag names straight from libexif's tag table (no hand-written dictionary).
///
/// libexif's table is static and read-only; these lookups are safe from any thread.
public enum ExifTagNames {
    /// libexif's name for `tag` in that IFD, e.g. (0x8825, .ifd0) -> "GPSInfo", (0x0002, .gps) -> "GPSLatitude",
    /// (0x9003, .exif) -> "DateTimeOriginal". nil when libexif does not know the tag *in that IFD*
    /// (libexif says nil for a tag it knows but never records there, e.g. 0x9003 in IFD0).
    ///
    /// libexif marks the three IFD pointer tags (0x8769 ExifIfdPointer, 0x8825 GPSInfoIFDPointer,
    /// 0xA005 InteroperabilityIFDPointer) as recorded in no IFD, because it handles them itself; for tags that
    /// libexif knows but records in *no* IFD, this returns libexif's table name whatever `ifd` is.
    public static func name(tag: UInt16, ifd: ExifIFDKind) -> String? {
        let exifTag = ExifTag(rawValue: UInt32(tag))
        if let cName = exif_tag_get_name_in_ifd(exifTag, ifd.libexif) { return String(cString: cName) }
        // Known to the table but recorded nowhere (the pointer tags)?
        for other in ExifIFDKind.allCases where exif_tag_get_name_in_ifd(exifTag, other.libexif) != nil {
            return nil
        }
        return tableName(exifTag)
    }

    /// The first name libexif's table has for `tag`, in any IFD.
    private static func tableName(_ tag: ExifTag) -> String? {
        let count = exif_tag_table_count()
        for i in 0..<count where exif_tag_table_get_tag(i) == tag {
            if let cName = exif_tag_table_get_name(i) { return String(cString: cName) }
        }
        return nil
    }

    /// The name libexif gives `tag` in the first IFD that knows it, in the order IFD0, EXIF, GPS,
    /// Interoperability, IFD1 — for tags written in an IFD where they do not belong. GPS and Interoperability
    /// tags share numbers (0x0001, 0x0002), so prefer `name(tag:ifd:)` whenever the IFD is known.
    public static func nameInAnyIFD(tag: UInt16) -> String? {
        for ifd in [ExifIFDKind.ifd0, .exif, .gps, .interoperability, .ifd1] {
            if let name = name(tag: tag, ifd: ifd) { return name }
        }
        return nil
    }
}
