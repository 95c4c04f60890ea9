// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// What QuickTime/MP4 metadata atoms and keys hold. Atoms not listed fall back to `NameClassifier` and are
/// reported as unknown, so a policy with `unknown: remove` drops them.
enum MP4Atoms {
    /// `udta` children and iTunes `ilst` entries by type.
    static let atoms: [FourCC: (name: String, category: Category)] = [
        "©xyz": ("location (ISO 6709)", .location), "loci": ("location (3GPP)", .location), "©lox": ("location", .location),
        "©mak": ("make", .device), "©mod": ("model", .device), "©swr": ("software", .software), "©too": ("encoder", .software),
        "©enc": ("encoded by", .software), "©fmt": ("format", .software), "©src": ("source", .device),
        "©day": ("date", .time), "©dat": ("date", .time), "date": ("date", .time),
        "©nam": ("title", .content), "©cmt": ("comment", .content), "©des": ("description", .content), "desc": ("description", .content),
        "ldes": ("long description", .content), "©inf": ("information", .content), "©key": ("keywords", .content),
        "kywd": ("keywords", .content), "titl": ("title", .content), "dscp": ("description", .content), "©alb": ("album", .content),
        "©gen": ("genre", .content), "gnre": ("genre", .content), "©lyr": ("lyrics", .content), "©grp": ("grouping", .content),
        "©ART": ("artist", .identity), "aART": ("album artist", .identity), "©aut": ("author", .identity), "auth": ("author", .identity),
        "©wrt": ("composer", .identity), "©cpy": ("copyright", .identity), "cprt": ("copyright", .identity), "©prd": ("producer", .identity),
        "©dir": ("director", .identity), "©prf": ("performers", .identity), "perf": ("performer", .identity), "ownr": ("owner", .identity),
        "apID": ("Apple account", .identity), "purd": ("purchase date", .time), "cnID": ("catalog id", .identity),
        "atID": ("artist id", .identity), "plID": ("playlist id", .identity), "geID": ("genre id", .content), "sfID": ("store id", .identity),
        "xid ": ("vendor id", .identity), "covr": ("cover art", .embedded), "thmb": ("thumbnail", .embedded), "©mal": ("mail", .identity),
        "name": ("track name", .content), "hnti": ("hint info", .software), "Xtra": ("Microsoft Xtra tags", .identity),
        "XMP_": ("XMP", .identity), "SDLN": ("Samsung model", .device), "smta": ("Samsung metadata", .device),
        "GPMF": ("GoPro telemetry", .location), "FIRM": ("firmware", .device), "LENS": ("lens serial", .device),
        "CAME": ("camera serial hash", .device), "MUID": ("media unique id", .device), "GUMI": ("global media id", .device),
        "HMMT": ("highlight tags", .content), "SETT": ("camera settings", .device), "AMBA": ("camera settings", .device),
        "BCID": ("camera id", .device), "manu": ("manufacturer", .device), "modl": ("model", .device), "meta": ("metadata", .content),
        "chpl": ("chapters", .content), "rtng": ("rating", .content), "tmpo": ("tempo", .content), "trkn": ("track number", .content),
        "disk": ("disc number", .content), "cpil": ("compilation", .content), "pgap": ("gapless", .structure), "stik": ("media kind", .content),
        "tvsh": ("show", .content), "tven": ("episode", .content), "tvnn": ("network", .content), "soal": ("sort album", .content),
        "soar": ("sort artist", .identity), "sonm": ("sort name", .content), "sosn": ("sort show", .content), "----": ("free-form tag", .content),
        "AllF": ("play mode", .content), "albm": ("album", .content), "yrrc": ("recording year", .time), "clsf": ("classification", .content),
        "hinf": ("hint info", .software), "LOOP": ("looping", .structure), "SelO": ("selection only", .structure),
        "WLOC": ("window location", .structure), "ptv ": ("print to video", .structure), "tagc": ("tag", .content), "uuid": ("vendor data", .device),
    ]

    /// Apple `mdta` keys (`com.apple.quicktime.*`, Android `com.android.*`) by their last component.
    static func keyCategory(_ key: String) -> (category: Category, known: Bool) {
        let lower = key.lowercased()
        let table: [(String, Category)] = [
            ("location", .location), ("iso6709", .location), ("gps", .location),
            ("content.identifier", .identity), ("live-photo", .identity), ("make", .device), ("model", .device),
            ("camera", .device), ("lens", .device), ("serial", .device), ("software", .software), ("version", .software),
            ("creationdate", .time), ("date", .time), ("author", .identity), ("artist", .identity), ("copyright", .identity),
            ("displayname", .identity), ("publisher", .identity), ("title", .content), ("description", .content),
            ("comment", .content), ("keywords", .content), ("information", .content), ("album", .content), ("genre", .content),
            ("collection", .content), ("rating", .content), ("capture.fps", .device), ("full-frame-rate", .device),
            ("detected-face", .identity), ("cinematic", .device), ("still-image-time", .embedded),
        ]
        if let hit = table.first(where: { lower.hasSuffix($0.0) || lower.contains("." + $0.0) }) { return (hit.1, true) }
        return (NameClassifier.category(of: key, otherwise: .content), false)
    }

    /// Sample-entry types of timed-metadata and other non-media tracks, and what their samples hold.
    static let timedMetadata: [FourCC: (name: String, category: Category)] = [
        "gpmd": ("GoPro GPMF telemetry (GPS, accelerometer, gyroscope)", .location),
        "camm": ("camera motion metadata (GPS, IMU)", .location),
        "mebx": ("Apple timed metadata (location, faces, camera state)", .location),
        "rtmd": ("Sony real-time metadata (GPS, lens, camera state)", .location),
        "fdsc": ("GoPro SOS / device diagnostics", .device),
        "tmcd": ("timecode (time of day of capture)", .time),
        "mett": ("text timed metadata", .content), "metx": ("XML timed metadata", .content), "urim": ("URI timed metadata", .content),
        "djmd": ("DJI flight telemetry", .location), "dbgi": ("DJI debug data", .device),
    ]

    /// Handlers whose tracks a viewer plays.
    static let mediaHandlers: Set<FourCC> = ["vide", "soun", "auxv", "pict"]
    /// Subtitle and text handlers: kept (a viewer shows them) unless they are chapters or look like telemetry.
    static let textHandlers: Set<FourCC> = ["text", "sbtl", "subt", "clcp"]
}
