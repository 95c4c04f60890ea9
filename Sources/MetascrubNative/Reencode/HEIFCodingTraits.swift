// SPDX-License-Identifier: GPL-3.0-or-later

/// What the item properties (`meta/iprp/ipco`) of a HEIF file say about how its images are coded, read from the
/// bytes before decoding: libheif 1.15 cannot tell a decoded image's native chroma format, and asking it for
/// YCbCr 4:2:0 silently resamples a 4:4:4 image. Only the facts the YCbCr conversion path needs.
struct HEIFCodingTraits {
    /// Chroma format (`chroma_format_idc`: 0 mono, 1 4:2:0, 2 4:2:2, 3 4:4:4) and luma/chroma bit depths of each
    /// `hvcC` property.
    var hevcConfigurations: [(chroma: Int, lumaBits: Int, chromaBits: Int)] = []
    /// Coding configurations of other codecs (`av1C`, `avcC`, `jpgC`, `vvcC`).
    var otherCodecs = 0
    var hasCleanAperture = false
    var hasRotationOrMirror = false

    /// Every image of the file is 8-bit HEVC 4:2:0 and none is cropped by `clap`: its decoded planes are then
    /// the samples libheif converts to RGB for display.
    var allHEVC420At8Bits: Bool {
        !hevcConfigurations.isEmpty && otherCodecs == 0 && !hasCleanAperture
            && hevcConfigurations.allSatisfy { $0.chroma == 1 && $0.lumaBits == 8 && $0.chromaBits == 8 }
    }

    /// Nil when the box structure cannot be walked (the caller then takes the general path).
    static func read(_ bytes: [UInt8]) -> HEIFCodingTraits? {
        guard let meta = children(bytes, 0..<bytes.count).first(where: { $0.type == "meta" }),
              meta.payload.count >= 4,
              let iprp = children(bytes, (meta.payload.lowerBound + 4)..<meta.payload.upperBound).first(where: { $0.type == "iprp" }),
              let ipco = children(bytes, iprp.payload).first(where: { $0.type == "ipco" })
        else { return nil }
        var traits = HEIFCodingTraits()
        for property in children(bytes, ipco.payload) {
            switch property.type {
            case "hvcC":
                let p = property.payload
                guard p.count >= 19 else { return nil }
                traits.hevcConfigurations.append((chroma: Int(bytes[p.lowerBound + 16] & 3),
                                                  lumaBits: Int(bytes[p.lowerBound + 17] & 7) + 8,
                                                  chromaBits: Int(bytes[p.lowerBound + 18] & 7) + 8))
            case "av1C", "avcC", "jpgC", "vvcC", "uncC":
                traits.otherCodecs += 1
            case "clap":
                traits.hasCleanAperture = true
            case "irot", "imir":
                traits.hasRotationOrMirror = true
            default:
                break
            }
        }
        return traits
    }

    private struct Child {
        var type: String
        var payload: Range<Int>
    }

    /// The boxes directly inside `range`; stops at the first header that does not fit.
    private static func children(_ bytes: [UInt8], _ range: Range<Int>) -> [Child] {
        var out: [Child] = []
        var at = range.lowerBound
        while range.upperBound - at >= 8 {
            var size = Int(bytes[at]) << 24 | Int(bytes[at + 1]) << 16 | Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
            let type = String(decoding: bytes[(at + 4)..<(at + 8)], as: UTF8.self)
            var header = 8
            if size == 1 {
                guard range.upperBound - at >= 16 else { break }
                var large: UInt64 = 0
                for i in 8..<16 { large = large << 8 | UInt64(bytes[at + i]) }
                guard large <= UInt64(range.upperBound - at) else { break }
                size = Int(large)
                header = 16
            } else if size == 0 {
                size = range.upperBound - at
            }
            guard size >= header, size <= range.upperBound - at else { break }
            out.append(Child(type: type, payload: (at + header)..<(at + size)))
            at += size
        }
        return out
    }
}
