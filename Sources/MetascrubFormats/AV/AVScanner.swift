// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// What the libavformat scan learned, for the cleaner and the verifier.
public struct AVLayout: Sendable {
    var demuxer = ""
    /// libavformat's long name of the container ("FLV (Flash Video)").
    var containerName = ""
    /// The first bytes of the file (the muxer choice looks at the MPEG-PS pack header).
    var head: [UInt8] = []
    var streamCount = 0
    /// Streams that are metadata (subtitles, data, attachments, cover art): stream index -> item index.
    /// Audio and video streams are the content and are always kept.
    var streamItems: [Int: Int] = [:]
    var chapterItems: [Int] = []
    /// Every tag, with the item that reports it; values are kept (in memory only) to write kept tags back.
    var tags: [(entry: AVEntry, item: Int)] = []
}

/// Turns libavformat's entries into metadata items: format, stream, chapter and program tags, and the streams
/// and chapters that are metadata themselves.
struct AVScanner {
    let options: ScanOptions
    var items: [MetadataItem] = []
    var layout = AVLayout()

    /// Tags whose only value is what FFmpeg's bitexact muxers write into every file (MXF identification,
    /// zero UMIDs): structure, so a cleaned file scans clean. Key -> value prefix.
    static let neutral: [String: String] = [
        "company_name": "FFmpeg", "product_name": "OP1a Muxer", "product_version_num": "0.0.0.0.0",
        "product_version": "0.0.0", "application_platform": "Lavf", "toolkit_version_num": "0.0.0.0.0",
        "uid": "adab4424-2f25-4dc7-92ff-", "generation_uid": "adab4424-2f25-4dc7-92ff-",
        "product_uid": "adab4424-2f25-4dc7-92ff-", "timecode": "00:00:00:00",
        "material_package_umid": "0x060A2B340101010501010D0013000000000000000000000000000000000000",
        "file_package_umid": "0x060A2B340101010501010D0013000000000000000000000000000000000000",
    ]
    /// Tags a player needs and that say nothing about who or where (kept and written back).
    static let structural: Set<String> = ["language", "operational_pattern_ul", "rotate", "stereo_mode", "alpha_mode"]

    init(options: ScanOptions) { self.options = options }

    mutating func run(_ entries: [AVEntry]) {
        for entry in entries {
            switch entry.kind {
            case .format:
                layout.demuxer = entry.key
                layout.containerName = entry.value
            case .stream:
                layout.streamCount = max(layout.streamCount, entry.index + 1)
                addStream(entry)
            case .chapter:
                layout.chapterItems.append(add("av:chapter", .content, location: "chapter #\(entry.index)", detail: "chapter mark"))
            case .formatTag, .streamTag, .chapterTag, .programTag:
                addTag(entry)
            }
        }
    }

    private mutating func add(_ key: String, _ category: Category, location: String, detail: String, value: String? = nil,
                              unknown: Bool = false) -> Int {
        items.append(MetadataItem(key: key, category: category, location: location, value: options.includeValues ? value : nil,
                                  detail: detail, isUnknown: unknown))
        return items.count - 1
    }

    private mutating func addStream(_ entry: AVEntry) {
        let location = "stream #\(entry.index)"
        let codec = entry.value
        switch entry.key {
        case "video", "audio": return
        case "subtitle":
            layout.streamItems[entry.index] = add("av:stream/subtitle", .content, location: location, detail: "subtitle stream (\(codec))")
        case "cover":
            layout.streamItems[entry.index] = add("av:stream/cover", .embedded, location: location, detail: "attached picture (\(codec))")
        case "attachment":
            layout.streamItems[entry.index] = add("av:stream/attachment", .embedded, location: location, detail: "attached file (\(codec))")
        default:
            // Data streams are timed metadata or telemetry (GPS tracks, timecode); nothing a player shows.
            layout.streamItems[entry.index] = add("av:stream/data", .embedded, location: location,
                                                  detail: "\(entry.key) stream (\(codec)) a player does not show", unknown: true)
        }
    }

    private mutating func addTag(_ entry: AVEntry) {
        let name = entry.key.lowercased()
        let location: String
        switch entry.kind {
        case .streamTag: location = "stream #\(entry.index) tags"
        case .chapterTag: location = "chapter #\(entry.index) tags"
        case .programTag: location = "program #\(entry.index) tags"
        default: location = "format tags"
        }
        let category: Category
        if let prefix = Self.neutral[name], entry.value.hasPrefix(prefix) {
            category = .structure
        } else if Self.structural.contains(name) {
            category = .structure
        } else if name == "creation_time" || name.hasSuffix("_date") {
            category = .time
        } else {
            category = NameClassifier.category(of: name, otherwise: .content)
        }
        let item = add("av:\(name)", category, location: location, detail: "\(entry.value.utf8.count)-byte tag", value: entry.value)
        layout.tags.append((entry, item))
    }
}
