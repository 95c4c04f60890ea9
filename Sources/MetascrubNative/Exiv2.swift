import CExiv2Bridge

/// One metadatum as exiv2 decodes it.
public struct DecodedTag: Sendable, Hashable {
    /// exiv2 key, e.g. "Exif.Canon.SerialNumber", "Iptc.Application2.City", "Xmp.dc.rights".
    public var key: String
    /// "Canon", "Application2", "dc".
    public var group: String
    /// "SerialNumber" (for XMP struct/array members the path after the prefix, e.g. "History[1]/stEvt:action").
    public var name: String
    /// exiv2's type name ("Ascii", "Undefined", "XmpText", "LangAlt", ...); empty when exiv2 has none.
    public var typeName: String
    public var count: Int
    /// Bytes of the value.
    public var size: Int
    /// exiv2's toString(), cut to 256 characters.
    public var value: String
    /// The numeric EXIF/IPTC tag (inside a maker note: the tag of its IFD entry, or the index in a binary array).
    public var number: Int = 0

    public init(key: String, group: String, name: String, typeName: String, count: Int, size: Int, value: String, number: Int = 0) {
        self.key = key
        self.group = group
        self.name = name
        self.typeName = typeName
        self.count = count
        self.size = size
        self.value = value
        self.number = number
    }
}

/// exiv2 (0.27, C++) decoding of raw metadata blocks, through the C bridge in `CExiv2Bridge`.
///
/// Thread safety: callable from any thread or task. The bridge serialises every call into exiv2 with one
/// process-wide mutex (exiv2 is not safe to use concurrently), so calls from many tasks run one at a time.
/// exiv2's own logging is muted, and no C++ exception crosses into Swift.
public enum Exiv2 {
    /// Longest `DecodedTag.value`, in characters.
    public static let valueCharacterLimit = 256

    /// Decode a TIFF-structured EXIF block (the APP1 payload after "Exif\0\0") including maker notes.
    public static func decodeExif(tiff: [UInt8]) throws -> [DecodedTag] {
        try run(tiff) { exiv2bridge_decode_exif($0, $1, $2) }.tags
    }

    /// Decode IPTC-IIM datasets (the raw IIM bytes, i.e. the payload of Photoshop resource 0x0404).
    public static func decodeIPTC(iim: [UInt8]) throws -> [DecodedTag] {
        try run(iim) { exiv2bridge_decode_iptc($0, $1, $2) }.tags
    }

    /// Decode an XMP packet (UTF-8 XML).
    public static func decodeXMP(packet: [UInt8]) throws -> [DecodedTag] {
        try run(packet) { exiv2bridge_decode_xmp($0, $1, $2) }.tags
    }

    /// Re-serialise an XMP packet keeping only properties whose top-level exiv2 key is in `keys`
    /// ("Xmp.dc.rights", "Xmp.dc.creator"; "Xmp.dc.creator[1]" or "Xmp.xmpMM.History[1]/stEvt:action" belong to
    /// "Xmp.dc.creator" / "Xmp.xmpMM.History", so a struct or array is kept whole when its top-level key is).
    /// The packet is written without the `<?xpacket?>` wrapper, in compact RDF. nil when nothing is kept.
    /// `fields` are structure fields left out of the properties kept, as exiv2 keys without array indices
    /// ("Xmp.plus.Licensor/plus:LicensorCity": that field of every licensor).
    public static func filterXMP(packet: [UInt8], keepingTopLevelKeys keys: Set<String>,
                                 droppingFields fields: Set<String> = []) throws -> [UInt8]? {
        // Keys back to back, each ended by a NUL, dropped fields marked by a leading "-"; a key holding a NUL
        // could never match, so it is left out.
        var joined: [CChar] = []
        for key in keys.sorted() + fields.sorted().map({ "-" + $0 }) where !key.utf8.contains(0) {
            joined.append(contentsOf: key.utf8.map { CChar(bitPattern: $0) })
            joined.append(0)
        }
        let decoded = try joined.withUnsafeBufferPointer { keyBuffer in
            try run(packet) { base, count, result in
                exiv2bridge_filter_xmp(base, count, keyBuffer.baseAddress, keyBuffer.count, result)
            }
        }
        return decoded.bytes
    }

    // MARK: - Bridge plumbing

    private struct Decoded {
        var tags: [DecodedTag] = []
        var bytes: [UInt8]? = nil
    }

    /// Runs one bridge function over `input`, copies its result into Swift values and frees it.
    private static func run(
        _ input: [UInt8],
        _ body: (UnsafePointer<UInt8>?, Int, UnsafeMutablePointer<exiv2bridge_result>) -> Int32
    ) throws -> Decoded {
        var result = exiv2bridge_result()
        defer { exiv2bridge_result_free(&result) }
        let rc = input.withUnsafeBufferPointer { buffer in
            body(buffer.baseAddress, buffer.count, &result)
        }
        guard rc == 0 else {
            let message = result.error.data != nil ? string(result.error) : "exiv2 bridge call failed"
            throw NativeError.library(name: "exiv2", message: message)
        }
        var decoded = Decoded()
        if let tags = result.tags {
            decoded.tags.reserveCapacity(result.tag_count)
            for i in 0..<result.tag_count {
                let tag = tags[i]
                var value = string(tag.value)
                if value.count > valueCharacterLimit { value = String(value.prefix(valueCharacterLimit)) }
                decoded.tags.append(DecodedTag(
                    key: string(tag.key), group: string(tag.group), name: string(tag.name),
                    typeName: string(tag.type_name), count: Int(tag.count), size: Int(tag.size), value: value,
                    number: Int(tag.tag_number)))
            }
        }
        if let bytes = result.bytes, result.byte_count > 0 {
            decoded.bytes = Array(UnsafeBufferPointer(start: bytes, count: result.byte_count))
        }
        return decoded
    }

    private static func string(_ s: exiv2bridge_string) -> String {
        guard let data = s.data, s.length > 0 else { return "" }
        return data.withMemoryRebound(to: UInt8.self, capacity: s.length) {
            String(decoding: UnsafeBufferPointer(start: $0, count: s.length), as: UTF8.self)
        }
    }

    /// `Exiv2::versionString()`.
    static func version() -> String {
        var buffer = [CChar](repeating: 0, count: 64)
        let length = buffer.withUnsafeMutableBufferPointer { exiv2bridge_version($0.baseAddress, $0.count) }
        let used = min(length, buffer.count - 1)
        return String(decoding: buffer[0..<used].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
