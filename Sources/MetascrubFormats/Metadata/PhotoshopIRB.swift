// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// Photoshop image resource blocks ("8BIM" resources), as in JPEG APP13. IPTC inside resource 0x0404 is
/// itemised per dataset; other resources are one item each.
public struct PhotoshopIRB: Sendable {
    public struct Resource: Sendable {
        public var id: UInt16
        public var offset: Int
        public var raw: [UInt8]
        public var dataRange: Range<Int>
    }

    public var resources: [Resource]
    /// Bytes after the last well-formed resource.
    public var restAt: Int?

    static let names: [UInt16: (String, Category)] = [
        0x03ED: ("ResolutionInfo", .structure), 0x03F3: ("PrintFlags", .software), 0x0406: ("JPEGQuality", .structure),
        0x0408: ("GridGuidesInfo", .content), 0x0409: ("PhotoshopThumbnailOld", .embedded),
        0x040A: ("CopyrightFlag", .identity), 0x040B: ("URL", .content), 0x040C: ("PhotoshopThumbnail", .embedded),
        0x040D: ("GlobalAngle", .structure), 0x040F: ("ICC_Profile", .rendering), 0x0414: ("IDsBaseValue", .software),
        0x0419: ("GlobalAltitude", .structure), 0x041A: ("Slices", .content), 0x041E: ("URL_List", .content),
        0x0421: ("VersionInfo", .software), 0x0422: ("EXIFInfo", .device), 0x0424: ("XMP", .content),
        0x0425: ("IPTCDigest", .structure), 0x0426: ("PrintScale", .software), 0x0428: ("PixelInfo", .structure),
        0x042D: ("LayerSelectionIDs", .software), 0x0430: ("LayerGroupsEnabledID", .software),
        0x043A: ("PrintInfo", .software), 0x043B: ("PrintStyle", .software), 0x2710: ("PrintFlagsInfo", .software),
        0x0BB7: ("ClippingPathName", .content),
    ]

    public static let iptcID: UInt16 = 0x0404
    public static let iptcDigestID: UInt16 = 0x0425

    public static func name(_ id: UInt16) -> (String, Category, known: Bool) {
        if let (n, c) = names[id] { return (n, c, true) }
        if (0x07D0...0x0BB6).contains(id) { return ("Path\(id - 0x07D0)", .content, true) }
        return ("\(String(format4hex: id))", .content, false)
    }

    public static func parse(_ b: [UInt8]) -> PhotoshopIRB {
        var resources: [Resource] = []
        var at = 0
        while at + 12 <= b.count {
            guard b[at..<at + 4].elementsEqual([0x38, 0x42, 0x49, 0x4D]) else { return PhotoshopIRB(resources: resources, restAt: at) }
            let id = UInt16(BigEndian.u16(b, at + 4))
            let nameLength = Int(b[at + 6])
            var p = at + 6 + 1 + nameLength
            if (1 + nameLength) % 2 == 1 { p += 1 }
            guard p + 4 <= b.count else { return PhotoshopIRB(resources: resources, restAt: at) }
            let size = BigEndian.u32(b, p)
            let dataStart = p + 4
            guard size <= b.count - dataStart else { return PhotoshopIRB(resources: resources, restAt: at) }
            var end = dataStart + size
            if size % 2 == 1, end < b.count { end += 1 }
            resources.append(Resource(id: id, offset: at, raw: Array(b[at..<end]), dataRange: dataStart..<dataStart + size))
            at = end
        }
        return PhotoshopIRB(resources: resources, restAt: at < b.count && !b[at...].allSatisfy({ $0 == 0 }) ? at : nil)
    }
}
