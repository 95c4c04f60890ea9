// SPDX-License-Identifier: GPL-3.0-or-later

/// H.264 SEI NAL units (ITU-T H.264 7.3.2.3, D.1): lists the SEI messages of an escaped NAL unit with the
/// escaped byte range of each payload, and produces same-length replacements that neutralise a payload
/// without changing the NAL's length or its emulation-prevention structure. Used for AVCHD MDPM camera data
/// and encoder option strings (x264) in user_data_unregistered messages; decoding ignores both.
public enum H264SEI {
    /// AVCHD "Modified Digital Video Pack Metadata" user_data_unregistered UUID, followed by "MDPM".
    public static let mdpmUUID: [UInt8] = [0x17, 0xEE, 0x8C, 0x60, 0xF8, 0x4D, 0x11, 0xD9, 0x8C, 0xD6, 0x08, 0x00, 0x20, 0x0C, 0x9A, 0x66]
    /// x264's user_data_unregistered UUID (its option string follows).
    public static let x264UUID: [UInt8] = [0xDC, 0x45, 0xE9, 0xBD, 0xE6, 0xD9, 0x48, 0xB7, 0x96, 0x2C, 0xD8, 0x20, 0xD9, 0x23, 0xEE, 0xEF]

    public static let userDataUnregistered = 5

    public struct Message: Sendable, Equatable {
        public var payloadType: Int
        public var payloadSize: Int
        /// The payload's bytes in the escaped NAL, including emulation-prevention bytes between them.
        public var escapedRange: Range<Int>
        /// The unescaped payload.
        public var payload: [UInt8]

        /// The 16-byte UUID of a user_data_unregistered message.
        public var uuid: [UInt8]? {
            payloadType == H264SEI.userDataUnregistered && payload.count >= 16 ? Array(payload[0..<16]) : nil
        }

        public var isMDPM: Bool { uuid == H264SEI.mdpmUUID }
        /// Filler written by `neutralised` (only 0xFF, and the 00 00 01 bytes that keep emulation prevention): no data.
        public var isNeutralised: Bool { payload.allSatisfy { $0 == 0xFF || $0 == 0 || $0 == 1 } }
    }

    /// Removes emulation-prevention bytes; `map[i]` is the escaped index of unescaped byte `i`.
    public static func unescape(_ nal: ArraySlice<UInt8>) -> (rbsp: [UInt8], map: [Int]) {
        var rbsp: [UInt8] = []
        var map: [Int] = []
        rbsp.reserveCapacity(nal.count)
        map.reserveCapacity(nal.count)
        var zeros = 0
        for i in nal.indices {
            let b = nal[i]
            if zeros >= 2 && b == 3 {
                zeros = 0
                continue
            }
            zeros = b == 0 ? zeros + 1 : 0
            rbsp.append(b)
            map.append(i)
        }
        return (rbsp, map)
    }

    /// The SEI messages of an escaped SEI NAL unit (`nal[0]` is the NAL header, type 6). Parsing stops at the
    /// RBSP trailing bits or at the first message that does not fit (a damaged NAL yields the messages before it).
    public static func messages(nal: [UInt8]) -> [Message] {
        var end = nal.count
        while end > 1 && nal[end - 1] == 0 { end -= 1 }  // trailing_zero_8bits before the next start code
        guard end > 1, nal[0] & 0x1F == 6 else { return [] }
        let (rbsp, map) = unescape(nal[1..<end])
        var out: [Message] = []
        var pos = 0
        while pos < rbsp.count {
            if pos == rbsp.count - 1 && rbsp[pos] == 0x80 { break }  // rbsp_trailing_bits
            var type = 0, size = 0
            while pos < rbsp.count && rbsp[pos] == 0xFF { type += 255; pos += 1 }
            guard pos < rbsp.count else { break }
            type += Int(rbsp[pos]); pos += 1
            while pos < rbsp.count && rbsp[pos] == 0xFF { size += 255; pos += 1 }
            guard pos < rbsp.count else { break }
            size += Int(rbsp[pos]); pos += 1
            guard size <= rbsp.count - pos else { break }
            let lo = map[pos]
            let hi = pos + size < rbsp.count ? map[pos + size] : end
            out.append(Message(payloadType: type, payloadSize: size, escapedRange: lo..<hi, payload: Array(rbsp[pos..<pos + size])))
            pos += size
        }
        return out
    }

    /// Bytes to write over `message.escapedRange` so the payload becomes a user_data_unregistered message with
    /// an all-0xFF UUID and 0xFF filler: the same escaped length, the same unescaped payload size, no start
    /// code and no invalid emulation-prevention sequence. nil when the range cannot be rewritten that way.
    public static func neutralised(nal: [UInt8], message: Message) -> [UInt8]? {
        let range = message.escapedRange
        guard range.lowerBound >= 1, range.upperBound <= nal.count else { return nil }
        let escaped = range.count
        let k = escaped - message.payloadSize  // emulation-prevention bytes inside the range
        guard k >= 0 else { return nil }
        var out: [UInt8] = []
        // A zero just before the range would form 00 00 00 with a filler that starts with 00 00.
        if k > 0 && nal[range.lowerBound - 1] == 0 { out.append(0xFF) }
        // Each emulation-prevention byte is kept as `00 00 03`; the byte after the last must be 0..3.
        for _ in 0..<k { out += [0x00, 0x00, 0x03] }
        if k > 0 { out.append(0x01) }
        guard out.count <= escaped else { return nil }
        out += [UInt8](repeating: 0xFF, count: escaped - out.count)
        // Check: the patched NAL still parses into the same message sizes, and the new payload holds no data.
        var patched = nal
        patched.replaceSubrange(range, with: out)
        let before = messages(nal: nal), after = messages(nal: patched)
        guard before.map({ [$0.payloadType, $0.payloadSize] }) == after.map({ [$0.payloadType, $0.payloadSize] }),
              after.contains(where: { $0.escapedRange == range && $0.isNeutralised }),
              !hasStartCode(patched[1...]) else { return nil }
        return out
    }

    /// Whether escaped bytes contain 00 00 00, 00 00 01 or 00 00 02 (not allowed inside a NAL unit).
    static func hasStartCode(_ bytes: ArraySlice<UInt8>) -> Bool {
        var zeros = 0
        var i = bytes.startIndex
        // Trailing zeros belong to the byte stream, not the NAL.
        var end = bytes.endIndex
        while end > bytes.startIndex && bytes[end - 1] == 0 { end -= 1 }
        while i < end {
            let b = bytes[i]
            if zeros >= 2 && b <= 2 { return true }
            zeros = b == 0 ? zeros + 1 : 0
            i += 1
        }
        return false
    }

    /// AVCHD MDPM entries (after the UUID: "MDPM", a count, then 5-byte tag/value entries), per ExifTool's H264
    /// tables: tags 0x18/0x19 capture date and time zone, 0xB0–0xCF GPS, 0xE0–0xEF make and model, the rest
    /// camera settings.
    public struct MDPMEntry: Sendable {
        public var tag: UInt8
        public var value: [UInt8]
    }

    public static func mdpmEntries(_ payload: [UInt8]) -> [MDPMEntry] {
        guard payload.count >= 21, payload[16..<20].elementsEqual("MDPM".utf8) else { return [] }
        let count = Int(payload[20])
        var out: [MDPMEntry] = []
        var at = 21
        for _ in 0..<count where at + 5 <= payload.count {
            out.append(MDPMEntry(tag: payload[at], value: Array(payload[at + 1..<at + 5])))
            at += 5
        }
        return out
    }

    public enum MDPMKind: String, Sendable { case time, location, device, settings }

    public static func kind(ofMDPMTag tag: UInt8) -> MDPMKind {
        switch tag {
        case 0x13, 0x18, 0x19: .time
        case 0xB0...0xCF: .location
        case 0xE0...0xEF: .device
        default: .settings
        }
    }

    /// "YYYY:MM:DD hh:mm:ss±hh:mm" from MDPM tags 0x18 and 0x19 (BCD), for `--show-values`.
    public static func mdpmDate(_ entries: [MDPMEntry]) -> String? {
        guard let a = entries.first(where: { $0.tag == 0x18 })?.value, let b = entries.first(where: { $0.tag == 0x19 })?.value else { return nil }
        func bcd(_ v: UInt8) -> String { String(v >> 4) + String(v & 0x0F) }
        let tz = a[0]
        let sign = tz & 0x20 != 0 ? "-" : "+"
        let zone = "\(sign)\(bcd(tz & 0x1F).suffix(2)):\(tz & 0x40 != 0 ? "30" : "00")"
        return "\(bcd(a[1]))\(bcd(a[2])):\(bcd(a[3])):\(bcd(b[0])) \(bcd(b[1])):\(bcd(b[2])):\(bcd(b[3]))\(zone)"
    }
}
