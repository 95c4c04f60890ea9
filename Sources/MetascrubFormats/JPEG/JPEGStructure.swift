// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

#if canImport(Glibc)
import Glibc
#endif

/// The segment list of a JPEG file (ITU T.81 B.1), with the entropy-coded data after each SOS located
/// but never parsed or copied through parsing code.
struct JPEGStructure {
    enum Role: Equatable {
        case jfif, jfxx, exif, xmp, xmpExtension, icc, mpf, photoshop, adobe, comment, jumbf
        case otherApp(String)
        /// A marker segment no decoder needs and no reader here understands (DNL with nothing to define, JPGn,
        /// reserved codes): whatever it carries is an `unknown` item.
        case unknownMarker
        /// Frame, tables, restart interval: what a decoder needs.
        case structural
        /// Start of scan; its entropy-coded data runs to `entropyEnd`.
        case scan
    }

    struct Segment {
        var marker: UInt8
        /// Offset of the 0xFF that starts the marker.
        var offset: Int64
        /// Marker, length field and payload.
        var length: Int
        var role: Role
        var entropyEnd: Int64?
        /// Set by a parse given an `EntropyHint`: this scan's entropy-coded data and the marker after it were
        /// found byte-identical to that range of the hint's source, which `JPEGVerifier.imageStream` then need
        /// not compare again.
        var copiedFrom: CopiedRun?

        var payloadOffset: Int64 { offset + 4 }
        var payloadLength: Int { max(0, length - 4) }
        /// Everything this segment stands for in the image stream: the segment and, for a scan, its data.
        var streamEnd: Int64 { entropyEnd ?? offset + Int64(length) }
        var name: String {
            switch marker {
            case 0xE0...0xEF: "APP\(marker - 0xE0)"
            case 0xFE: "COM"
            case 0xDA: "SOS"
            case 0xDC: "DNL"
            case 0xF0...0xFD: "JPG\(marker - 0xF0)"
            case 0xDB: "DQT"
            case 0xC4: "DHT"
            case 0xDD: "DRI"
            case 0xC0...0xCF: "SOF\(marker - 0xC0)"
            default: "marker 0x\(String(marker, radix: 16, uppercase: true))"
            }
        }
    }

    static let exifHeader: [UInt8] = Array("Exif\0\0".utf8)
    static let xmpHeader: [UInt8] = Array("http://ns.adobe.com/xap/1.0/\0".utf8)
    static let xmpExtensionHeader: [UInt8] = Array("http://ns.adobe.com/xmp/extension/\0".utf8)
    static let iccHeader: [UInt8] = Array("ICC_PROFILE\0".utf8)
    static let photoshopHeader: [UInt8] = Array("Photoshop 3.0\0".utf8)
    static let maxSegments = 65_536
    /// Marker segments a decoder reads (ITU T.81 table B.1): frames (but the reserved JPG code 0xC8), Huffman
    /// and arithmetic tables, quantisation tables, restart interval, scans, hierarchical DHP and EXP.
    static let decoderMarkers: Set<UInt8> = Set((0xC0...0xCF).filter { $0 != 0xC8 })
        .union([0xDA, 0xDB, 0xDD, 0xDE, 0xDF])
    /// Bytes of the JFIF APP0 fields ("JFIF\0", version, units, densities, thumbnail size) before its thumbnail.
    static let jfifFields = 14
    /// Bytes of the Adobe APP14 fields ("Adobe", DCTEncodeVersion, APP14Flags0 and 1, ColorTransform).
    static let adobeFields = 12

    var segments: [Segment] = []
    var eoiOffset: Int64 = 0
    var fileSize: Int64 = 0
    /// Width, height and component sampling from the frame header.
    var width = 0
    var height = 0

    /// Bytes after EOI.
    var trailer: Range<Int64>? { eoiOffset + 2 < fileSize ? (eoiOffset + 2)..<fileSize : nil }

    /// `hint`: the file this one was cleaned from, whose entropy-coded data a remux copies unchanged (see
    /// `EntropyHint`); it only saves work, the result is the same as without it.
    static func parse(_ source: any ByteSource, hint: EntropyHint? = nil) throws -> JPEGStructure {
        let format = "JPEG"
        var s = JPEGStructure()
        s.fileSize = source.size
        let soi = try source.read(at: 0, count: 2, format: format, path: "SOI")
        guard soi == [0xFF, 0xD8] else {
            throw MetascrubError.malformed(format: format, path: "SOI", offset: 0, reason: "not a JPEG start-of-image marker")
        }
        var reader = BufferedReader(source, at: 2, chunk: 1 << 20)
        var position: Int64 = 2
        while true {
            guard s.segments.count < maxSegments else {
                throw MetascrubError.limitExceeded(format: format, path: "segment list", offset: position, limit: "\(maxSegments) segments")
            }
            let head = try source.read(at: position, count: 2, format: format, path: "marker after segment \(s.segments.count)")
            guard head[0] == 0xFF else {
                throw MetascrubError.malformed(format: format, path: "segment \(s.segments.count)", offset: position,
                                               reason: "expected a marker, found 0x\(String(head[0], radix: 16))")
            }
            var marker = head[1]
            // Fill bytes (0xFF 0xFF …) may precede a marker.
            while marker == 0xFF {
                position += 1
                marker = try source.read(at: position, count: 2, format: format, path: "fill bytes")[1]
            }
            if marker == 0xD9 {
                s.eoiOffset = position
                break
            }
            if marker == 0xD8 || marker == 0x00 {
                throw MetascrubError.malformed(format: format, path: "segment \(s.segments.count)", offset: position,
                                               reason: "unexpected marker 0x\(String(marker, radix: 16)) outside entropy-coded data")
            }
            if (0xD0...0xD7).contains(marker) || marker == 0x01 {
                s.segments.append(Segment(marker: marker, offset: position, length: 2, role: .structural))
                position += 2
                continue
            }
            let lengthBytes = try source.read(at: position + 2, count: 2, format: format, path: "length of marker 0x\(String(marker, radix: 16))")
            let length = BigEndian.u16(lengthBytes, 0)
            guard length >= 2 else {
                throw MetascrubError.malformed(format: format, path: "segment \(s.segments.count)", offset: position + 2,
                                               reason: "length \(length) is below the minimum of 2")
            }
            guard position + 2 + Int64(length) <= source.size else {
                throw MetascrubError.truncated(format: format, path: "segment 0x\(String(marker, radix: 16)) #\(s.segments.count)",
                                               offset: position, needed: position + 2 + Int64(length) - source.size)
            }
            var segment = Segment(marker: marker, offset: position, length: 2 + length, role: .structural)
            segment.role = try role(of: marker, segment: segment, source)
            // A DNL is structure only where it defines the height the frame left at 0, with nothing after it.
            let definesHeight = marker == 0xDC && s.height == 0 && length == 4
            if segment.role == .structural, !Self.decoderMarkers.contains(marker), !definesHeight {
                segment.role = .unknownMarker
            }
            if (0xC0...0xCF).contains(marker), marker != 0xC4, marker != 0xC8, marker != 0xCC, length >= 8 {
                let frame = try source.read(at: position + 4, count: 5)
                s.height = BigEndian.u16(frame, 1)
                s.width = BigEndian.u16(frame, 3)
            }
            position += 2 + Int64(length)
            if marker == 0xDA {
                segment.role = .scan
                let scanIndex = s.segments.filter { $0.role == .scan }.count
                if let hint, let copied = try hint.copy(of: scanIndex, at: position, in: source) {
                    segment.entropyEnd = copied.end
                    segment.copiedFrom = copied.run
                } else {
                    segment.entropyEnd = try entropyEnd(&reader, from: position)
                }
                position = segment.entropyEnd!
            }
            s.segments.append(segment)
        }
        guard s.segments.contains(where: { $0.role == .scan }) else {
            throw MetascrubError.malformed(format: format, path: "image", offset: s.eoiOffset, reason: "no scan (SOS) before EOI")
        }
        return s
    }

    /// The offset of the first marker after entropy-coded data that is not a stuffed byte or a restart marker.
    private static func entropyEnd(_ reader: inout BufferedReader, from start: Int64) throws -> Int64 {
        if reader.source.isInMemory, start <= reader.source.size {
            let source = reader.source
            let found = try source.withBytes(at: start, count: Int(source.size - start)) { Self.markerAfterEntropy(in: $0) }
            guard let found else {
                throw MetascrubError.truncated(format: "JPEG", path: "entropy-coded data", offset: start, needed: 2)
            }
            return start + Int64(found)
        }
        reader.seek(start)
        while try reader.seekToNextFF() != nil {
            _ = try reader.next()
            // Skip fill bytes, then look at the marker code.
            var code = try reader.next()
            while code == 0xFF { code = try reader.next() }
            guard let c = code else { break }
            if c == 0x00 || (0xD0...0xD7).contains(c) { continue }
            return reader.position - 2
        }
        throw MetascrubError.truncated(format: "JPEG", path: "entropy-coded data", offset: start, needed: 2)
    }

    /// Offset of the first marker that ends entropy-coded data (not a stuffed 0xFF00, not RSTn), with memchr
    /// over bytes already in memory: the walk that finds EOI in every JPEG, so it must not copy or call per byte.
    static func markerAfterEntropy(in bytes: UnsafeRawBufferPointer) -> Int? {
        guard let base = bytes.baseAddress else { return nil }
        let end = bytes.count
        var at = 0
        while at < end {
            guard let hit = memchr(base + at, 0xFF, end - at) else { return nil }
            let ff = UnsafeRawPointer(hit) - base
            var next = ff + 1
            while next < end, bytes[next] == 0xFF { next += 1 }
            guard next < end else { return nil }
            let code = bytes[next]
            if code == 0x00 || (0xD0...0xD7).contains(code) {
                at = next + 1
                continue
            }
            return next - 1
        }
        return nil
    }

    /// The range of a scan's entropy-coded data and the marker that ends it (`..<entropyEnd + 2`): the bytes
    /// that decide where the walk for that marker stops.
    var entropyRuns: [Range<Int64>] {
        segments.compactMap { segment in
            guard segment.role == .scan, let end = segment.entropyEnd else { return nil }
            return (segment.offset + Int64(segment.length))..<(end + 2)
        }
    }

    private static func role(of marker: UInt8, segment: Segment, _ source: any ByteSource) throws -> Role {
        guard (0xE0...0xEF).contains(marker) || marker == 0xFE else { return .structural }
        if marker == 0xFE { return .comment }
        let head = try source.read(at: segment.payloadOffset, count: min(segment.payloadLength, 40))
        func starts(_ prefix: [UInt8]) -> Bool { head.count >= prefix.count && Array(head[0..<prefix.count]) == prefix }
        func ascii(_ text: String) -> Bool { starts(Array(text.utf8)) }
        switch marker {
        case 0xE0:
            if ascii("JFIF\0") { return .jfif }
            if ascii("JFXX\0") { return .jfxx }
        case 0xE1:
            if ascii("Exif\0") { return .exif }
            if starts(xmpHeader) { return .xmp }
            if starts(xmpExtensionHeader) { return .xmpExtension }
        case 0xE2:
            if starts(iccHeader) { return .icc }
            if ascii("MPF\0") { return .mpf }
        case 0xEB:
            if ascii("JP") { return .jumbf }
        case 0xED:
            if starts(photoshopHeader) { return .photoshop }
        case 0xEE:
            if ascii("Adobe") { return .adobe }
        default:
            break
        }
        let ident = head.prefix { $0 >= 0x20 && $0 < 0x7F }.prefix(24)
        return .otherApp(String(decoding: ident, as: UTF8.self))
    }
}
