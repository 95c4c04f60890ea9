// SPDX-License-Identifier: GPL-3.0-or-later

/// Finds text that states a position, in any payload kept whole (a comment, an iXML chunk, a subtitle
/// sample): the shapes drones, field recorders, dash cams and tagging tools write. Matching is on bytes (ASCII
/// case folded), so it needs no decoding and cannot be fooled by an invalid UTF-8 sequence around the text.
/// Every shape needs digits with a decimal point or an explicit degree form: a bare "GPS" word or a version
/// number is not a position.
enum LocationShapes {
    enum Kind: String, Sendable, CaseIterable {
        /// Two decimal numbers in coordinate range with 4+ fractional digits, side by side: `48.8583, 2.2945`.
        case coordinates
        /// Degrees, minutes and seconds: `48°51'29.9"N`, `48 deg 51' 29.88" N`.
        case dms
        /// Degrees and decimal minutes with hemisphere letters, as GPS receivers and geocaching write them:
        /// `N 48° 51.498 E 002° 17.670`, `48 51.498N 2 17.670E`.
        case ddm
        /// ISO 6709, as QuickTime and Android write it: `+48.8583+002.2945/`.
        case iso6709 = "iso-6709"
        /// A GPS, latitude or longitude field with a decimal value: `GPS (2.2945`, `lat="48.85`, `[latitude: 22.54`.
        case field
        /// An XML element or attribute that names a place or a position: iXML `LOCATION_GPS`, XMP `exif:GPS*`,
        /// `photoshop:City`, IPTC location structures.
        case element

        var what: String {
            switch self {
            case .coordinates: "a decimal coordinate pair"
            case .dms: "a position in degrees, minutes and seconds"
            case .ddm: "a position in degrees and decimal minutes"
            case .iso6709: "an ISO 6709 position"
            case .field: "a GPS/latitude/longitude field with a value"
            case .element: "a location element"
            }
        }
    }

    struct Match: Sendable {
        var kind: Kind
        /// Where in the payload, and how long.
        var range: Range<Int>
        /// For `.element`: the element's name as written.
        var name: String?
    }

    /// Element and attribute names whose non-empty value is a location. A trailing `*` takes any suffix.
    static let elementNames: [String] = [
        "location_gps", "location_name", "location_altitude",
        "exif:gps*", "exifex:gps*", "photoshop:city", "photoshop:state", "photoshop:country",
        "iptc4xmpcore:location", "iptc4xmpcore:countrycode", "iptc4xmpext:locationshown", "iptc4xmpext:locationcreated",
        "xmpdm:shotlocation", "com.apple.quicktime.location.iso6709", "gpscoordinates", "gpslatitude", "gpslongitude",
        // W3C Basic Geo (WGS84) and the HTML meta names sites use for it.
        "geo:lat", "geo:long", "geo:lat_long", "geo:point", "geo.position", "icbm",
    ]
    /// Field names followed by a decimal value. Longer names first: `latitude` must not stop at `lat`.
    static let fieldNames: [String] = ["gpslatitude", "gpslongitude", "latitude", "longitude", "gps", "lat", "long", "lon", "lng"]
    /// Names that are also ordinary words: only a key-value mark (`:`, `=`, `"`, `>`) before the value makes them a field.
    private static let wordFieldNames: Set<[UInt8]> = [Array("long".utf8)]
    private static let fieldBytes = fieldNames.map { Array($0.utf8) }
    private static let elementBytes = elementNames.map { ($0.hasSuffix("*") ? Array($0.dropLast().utf8) : Array($0.utf8), $0.hasSuffix("*")) }

    /// The first match of each kind (of each name, for elements), in payload order; at most `limit` bytes are looked at.
    static func find(in payload: [UInt8], limit: Int = 1 << 20) -> [Match] {
        let text = payload.prefix(limit).map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
        // The first match of each kind, and of each element name (LOCATION_NAME and LOCATION_GPS are two things).
        var found: [String: Match] = [:]
        var i = 0
        while i < text.count, found.count < 32 {
            for m in matches(at: i, text) where found[m.kind.rawValue + (m.name ?? "")] == nil { found[m.kind.rawValue + (m.name ?? "")] = m }
            i += 1
        }
        // Element names as written (the matching saw them case-folded).
        return found.values.sorted { $0.range.lowerBound < $1.range.lowerBound }.map { m in
            var m = m
            if let name = m.name { m.name = String(decoding: payload[m.range.lowerBound..<m.range.lowerBound + name.utf8.count], as: UTF8.self) }
            return m
        }
    }

    /// Whether any sample among `samples` states a position (the subtitle-telemetry decision).
    static func holdsPosition(_ samples: [[UInt8]]) -> Match? {
        for s in samples { if let m = find(in: s, limit: 1 << 16).first { return m } }
        return nil
    }

    private static func matches(at i: Int, _ t: [UInt8]) -> [Match] {
        let c = t[i]
        var out: [Match] = []
        let startOfWord = i == 0 || !isLetter(t[i - 1])
        if isDigit(c) || c == 0x2D || c == 0x2B, i == 0 || !isDigit(t[i - 1]) && t[i - 1] != 0x2E {
            if let m = coordinatePair(at: i, t) { out.append(m) }
            if let m = dms(at: i, t) { out.append(m) }
            if let m = hemisphereDMS(at: i, t, letterFirst: false) { out.append(m) }
            if let m = ddm(at: i, t, letterFirst: false) { out.append(m) }
            if c == 0x2B || c == 0x2D, let m = iso6709(at: i, t) { out.append(m) }
        }
        if startOfWord, isLetter(c) {
            if let m = hemisphereDMS(at: i, t, letterFirst: true) { out.append(m) }
            if let m = ddm(at: i, t, letterFirst: true) { out.append(m) }
            if let m = field(at: i, t) { out.append(m) }
            if let m = element(at: i, t) { out.append(m) }
        }
        return out
    }

    // MARK: shapes

    /// `[-+]d{1,3}.d{4,}` then 1–3 separators (space, comma, semicolon, slash) then another such number.
    private static func coordinatePair(at i: Int, _ t: [UInt8]) -> Match? {
        guard let a = decimal(at: i, t, minFraction: 4), abs(a.value) <= 180 else { return nil }
        var j = a.end, gap = 0
        while j < t.count, gap < 4, [0x20, 0x2C, 0x3B, 0x2F, 0x09].contains(t[j]) { j += 1; gap += 1 }
        guard gap >= 1, gap <= 3, let b = decimal(at: j, t, minFraction: 4), abs(b.value) <= 180,
              min(abs(a.value), abs(b.value)) <= 90, a.value != 0 || b.value != 0 else { return nil }
        return Match(kind: .coordinates, range: i..<b.end)
    }

    /// `d{1,3}` then `°`, `º` or `deg`, then minutes and a `'` or `′`.
    private static func dms(at i: Int, _ t: [UInt8]) -> Match? {
        var j = i
        guard let deg = digits(at: j, t, max: 3) else { return nil }
        j = skipSpaces(deg, t)
        if starts(t, at: j, [0xC2, 0xB0]) || starts(t, at: j, [0xC2, 0xBA]) { j += 2 }  // ° º in UTF-8
        else if j < t.count, t[j] == 0xB0 || t[j] == 0xBA { j += 1 }  // in Latin-1
        else if starts(t, at: j, [0x64, 0x65, 0x67]) { j += 3 }  // deg
        else { return nil }
        j = skipSpaces(j, t)
        guard let minutes = digits(at: j, t, max: 2) else { return nil }
        j = minutes
        if j < t.count, t[j] == 0x2E, let f = digits(at: j + 1, t, max: 8) { j = f }
        j = skipSpaces(j, t)
        if j < t.count, t[j] == 0x27 { return Match(kind: .dms, range: i..<j + 1) }
        if starts(t, at: j, [0xE2, 0x80, 0xB2]) { return Match(kind: .dms, range: i..<j + 3) }  // ′
        return nil
    }

    /// A latitude and a longitude as space-separated degrees, minutes and seconds with hemisphere letters and no
    /// degree sign, as flight logs and GPS receivers print them: `N 48 51 30.0 E 2 17 40.0` or
    /// `48 51 30.0 N, 2 17 40.0 E`. Both halves are required, so a lone `N 12 3 4` is not a position.
    private static func hemisphereDMS(at i: Int, _ t: [UInt8], letterFirst: Bool) -> Match? {
        func half(_ j: Int, _ letters: [UInt8], maxDegrees: Int) -> Int? {
            var j = j
            if letterFirst {
                guard j < t.count, letters.contains(t[j]) else { return nil }
                j = skipSpaces(j + 1, t)
            }
            guard let d = digits(at: j, t, max: maxDegrees), d < t.count, t[d] == 0x20 else { return nil }
            let m0 = skipSpaces(d, t)
            guard let m = digits(at: m0, t, max: 2), m < t.count, t[m] == 0x20 else { return nil }
            let s0 = skipSpaces(m, t)
            guard var e = digits(at: s0, t, max: 2) else { return nil }
            if e < t.count, t[e] == 0x2E, let f = digits(at: e + 1, t, max: 6) { e = f }
            if !letterFirst {
                e = skipSpaces(e, t)
                guard e < t.count, letters.contains(t[e]) else { return nil }
                e += 1
            }
            return e
        }
        guard let latEnd = half(i, [0x6E, 0x73], maxDegrees: 2) else { return nil }  // n s
        var j = latEnd
        while j < t.count, j - latEnd < 3, t[j] == 0x20 || t[j] == 0x2C || t[j] == 0x3B { j += 1 }
        guard let end = half(j, [0x65, 0x77], maxDegrees: 3) else { return nil }  // e w
        return Match(kind: .dms, range: i..<end)
    }

    /// A latitude and a longitude in degrees and decimal minutes, each with its hemisphere letter before or after
    /// it and an optional degree mark and minute mark: both halves are required, and the minutes need a fraction, so
    /// `N 12 34` or a lone `48° 51.5` is not a position.
    private static func ddm(at i: Int, _ t: [UInt8], letterFirst: Bool) -> Match? {
        func half(_ j: Int, _ letters: [UInt8], maxDegrees: Int) -> Int? {
            var j = j
            if letterFirst {
                guard j < t.count, letters.contains(t[j]) else { return nil }
                j = skipSpaces(j + 1, t)
            }
            guard let d = digits(at: j, t, max: maxDegrees) else { return nil }
            j = d
            if let mark = degreeMark(at: j, t) { j = mark }
            let m0 = skipSpaces(j, t)
            guard m0 > d, let m = digits(at: m0, t, max: 2), m < t.count, t[m] == 0x2E,
                  let f = digits(at: m + 1, t, max: 6) else { return nil }
            var e = f
            if e < t.count, t[e] == 0x27 { e += 1 } else if starts(t, at: e, [0xE2, 0x80, 0xB2]) { e += 3 }
            if !letterFirst {
                e = skipSpaces(e, t)
                guard e < t.count, letters.contains(t[e]), e + 1 == t.count || !isLetter(t[e + 1]) else { return nil }
                e += 1
            }
            return e
        }
        guard let latEnd = half(i, [0x6E, 0x73], maxDegrees: 2) else { return nil }  // n s
        var j = latEnd
        while j < t.count, j - latEnd < 3, t[j] == 0x20 || t[j] == 0x2C || t[j] == 0x3B || t[j] == 0x2F { j += 1 }
        guard let end = half(j, [0x65, 0x77], maxDegrees: 3) else { return nil }  // e w
        return Match(kind: .ddm, range: i..<end)
    }

    /// The end of a degree mark at `j`: `°` or `º` in UTF-8 or Latin-1, or `deg`.
    private static func degreeMark(at j: Int, _ t: [UInt8]) -> Int? {
        if starts(t, at: j, [0xC2, 0xB0]) || starts(t, at: j, [0xC2, 0xBA]) { return j + 2 }
        if j < t.count, t[j] == 0xB0 || t[j] == 0xBA { return j + 1 }
        if starts(t, at: j, [0x64, 0x65, 0x67]) { return j + 3 }
        return nil
    }

    /// `±DD[MM[SS]][.f]±DDD[MM[SS]][.f][±alt]` ending in `/` (or `CRS`), as QuickTime's ©xyz and mp4 `location`.
    private static func iso6709(at i: Int, _ t: [UInt8]) -> Match? {
        guard let lat = signedRun(at: i, t, intDigits: [2, 4, 6]), let lon = signedRun(at: lat, t, intDigits: [3, 5, 7]) else { return nil }
        var j = lon
        if let alt = signedRun(at: j, t, intDigits: Array(1...6)) { j = alt }
        guard j < t.count, t[j] == 0x2F || starts(t, at: j, [0x63, 0x72, 0x73]) else { return nil }
        return Match(kind: .iso6709, range: i..<j + 1)
    }

    /// A field name (not inside a longer word), up to 16 bytes of punctuation and spaces, then a decimal
    /// number with 2+ fractional digits.
    private static func field(at i: Int, _ t: [UInt8]) -> Match? {
        for name in fieldBytes where starts(t, at: i, name) {
            var j = i + name.count
            if j < t.count, isLetter(t[j]) { continue }
            let stop = min(t.count, j + 16)
            var marked = false
            while j < stop, !isDigit(t[j]), t[j] != 0x2D, t[j] != 0x2B, !isLetter(t[j]) {
                marked = marked || [0x3A, 0x3D, 0x22, 0x3E].contains(t[j])
                j += 1
            }
            guard j < stop, marked || !wordFieldNames.contains(name), let value = decimal(at: j, t, minFraction: 2) else { return nil }
            return Match(kind: .field, range: i..<value.end)
        }
        return nil
    }

    /// `<name>value` or `name="value"` for a location element name, with a non-empty value.
    private static func element(at i: Int, _ t: [UInt8]) -> Match? {
        // `exif:GPSLatitude` is one element: its local name alone does not count again.
        let local = i > 0 && t[i - 1] == 0x3A
        for (prefix, wildcard) in elementBytes {
            guard starts(t, at: i, prefix), !local || prefix.contains(0x3A) else { continue }
            var j = i + prefix.count
            if wildcard { while j < t.count, isLetter(t[j]) || isDigit(t[j]) || t[j] == 0x5F { j += 1 } }
            else if j < t.count, isLetter(t[j]) || isDigit(t[j]) || t[j] == 0x5F { continue }
            let name = String(decoding: t[i..<j], as: UTF8.self)
            if j < t.count, t[j] == 0x3E {  // <NAME>value
                var k = j + 1
                while k < t.count, t[k] == 0x20 || t[k] == 0x0A || t[k] == 0x0D || t[k] == 0x09 { k += 1 }
                guard k < t.count, t[k] != 0x3C else { continue }
                return Match(kind: .element, range: i..<k + 1, name: name)
            }
            if j + 2 < t.count, t[j] == 0x3D, t[j + 1] == 0x22 || t[j + 1] == 0x27, t[j + 2] != t[j + 1] {  // name="value"
                return Match(kind: .element, range: i..<j + 3, name: name)
            }
        }
        return nil
    }

    // MARK: tokens

    /// A decimal number `[-+]?d{1,3}.d{minFraction,}` at `i`: its value and end.
    private static func decimal(at i: Int, _ t: [UInt8], minFraction: Int) -> (value: Double, end: Int)? {
        var j = i
        var negative = false
        if j < t.count, t[j] == 0x2D || t[j] == 0x2B { negative = t[j] == 0x2D; j += 1 }
        guard let intEnd = digits(at: j, t, max: 3), intEnd < t.count, t[intEnd] == 0x2E,
              let fracEnd = digits(at: intEnd + 1, t, max: 12), fracEnd - intEnd - 1 >= minFraction else { return nil }
        if fracEnd < t.count, isDigit(t[fracEnd]) { return nil }
        guard let value = Double(String(decoding: t[j..<fracEnd], as: UTF8.self)) else { return nil }
        return (negative ? -value : value, fracEnd)
    }

    /// A sign, then digits whose integer part has one of `intDigits` lengths, then an optional fraction.
    private static func signedRun(at i: Int, _ t: [UInt8], intDigits: [Int]) -> Int? {
        guard i < t.count, t[i] == 0x2B || t[i] == 0x2D, let end = digits(at: i + 1, t, max: 8), intDigits.contains(end - i - 1) else { return nil }
        if end < t.count, t[end] == 0x2E, let f = digits(at: end + 1, t, max: 12) { return f }
        return end
    }

    /// End of 1…`max` digits at `i` (nil when there is none or more than `max`).
    private static func digits(at i: Int, _ t: [UInt8], max: Int) -> Int? {
        var j = i
        while j < t.count, isDigit(t[j]), j - i <= max { j += 1 }
        return j > i && j - i <= max ? j : nil
    }

    private static func skipSpaces(_ i: Int, _ t: [UInt8]) -> Int {
        var j = i
        while j < t.count, t[j] == 0x20 { j += 1 }
        return j
    }

    private static func starts(_ t: [UInt8], at i: Int, _ s: [UInt8]) -> Bool {
        i >= 0 && i + s.count <= t.count && t[i..<i + s.count].elementsEqual(s)
    }

    private static func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }
    private static func isLetter(_ c: UInt8) -> Bool { c >= 0x61 && c <= 0x7A }
}
