// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// IPTC-IIM datasets (record:dataset, length, value). Names follow the IIM specification, as ExifTool
/// prints them, so policies can say `iptc:CopyrightNotice`.
public enum IPTC {
    public struct Dataset: Sendable {
        public var record: UInt8
        public var number: UInt8
        public var offset: Int
        public var raw: [UInt8]       // the whole dataset, header included
        public var valueRange: Range<Int>
    }

    /// Record 2 (application) datasets: the ones that carry something, with their category.
    static let application: [UInt8: (String, Category)] = [
        0: ("ApplicationRecordVersion", .structure), 3: ("ObjectTypeReference", .content),
        4: ("ObjectAttributeReference", .content), 5: ("ObjectName", .content), 7: ("EditStatus", .content),
        10: ("Urgency", .content), 12: ("SubjectReference", .content), 15: ("Category", .content),
        20: ("SupplementalCategories", .content), 22: ("FixtureIdentifier", .content), 25: ("Keywords", .content),
        26: ("ContentLocationCode", .location), 27: ("ContentLocationName", .location),
        30: ("ReleaseDate", .time), 35: ("ReleaseTime", .time), 37: ("ExpirationDate", .time),
        38: ("ExpirationTime", .time), 40: ("SpecialInstructions", .content), 42: ("ActionAdvised", .content),
        45: ("ReferenceService", .content), 47: ("ReferenceDate", .time), 50: ("ReferenceNumber", .content),
        55: ("DateCreated", .time), 60: ("TimeCreated", .time), 62: ("DigitalCreationDate", .time),
        63: ("DigitalCreationTime", .time), 65: ("OriginatingProgram", .software), 70: ("ProgramVersion", .software),
        75: ("ObjectCycle", .content), 80: ("By-line", .identity), 85: ("By-lineTitle", .identity),
        90: ("City", .location), 92: ("Sub-location", .location), 95: ("Province-State", .location),
        100: ("Country-PrimaryLocationCode", .location), 101: ("Country-PrimaryLocationName", .location),
        103: ("OriginalTransmissionReference", .content), 105: ("Headline", .content), 110: ("Credit", .identity),
        115: ("Source", .identity), 116: ("CopyrightNotice", .identity), 118: ("Contact", .identity),
        120: ("Caption-Abstract", .content), 121: ("LocalCaption", .content), 122: ("Writer-Editor", .identity),
        130: ("ImageType", .structure), 131: ("ImageOrientation", .structure), 135: ("LanguageIdentifier", .content),
        184: ("JobID", .content), 187: ("MasterDocumentID", .software), 188: ("ShortDocumentID", .software),
        189: ("UniqueDocumentID", .software), 190: ("OwnerID", .identity), 221: ("Prefs", .software),
        225: ("ClassifyState", .content), 228: ("SimilarityIndex", .content), 230: ("DocumentNotes", .content),
        231: ("DocumentHistory", .software), 232: ("ExifCameraInfo", .device),
    ]
    static let envelope: [UInt8: (String, Category)] = [
        0: ("EnvelopeRecordVersion", .structure), 5: ("Destination", .content), 20: ("FileFormat", .structure),
        22: ("FileVersion", .structure), 30: ("ServiceIdentifier", .content), 40: ("EnvelopeNumber", .content),
        50: ("ProductID", .content), 60: ("EnvelopePriority", .content), 70: ("DateSent", .time),
        80: ("TimeSent", .time), 90: ("CodedCharacterSet", .structure), 100: ("UniqueObjectName", .identity),
    ]

    public static func name(record: UInt8, number: UInt8) -> (String, Category, known: Bool) {
        let table = record == 1 ? envelope : record == 2 ? application : [:]
        if let (name, category) = table[number] { return (name, category, true) }
        return ("\(record):\(number)", .content, false)
    }

    /// Parses IIM bytes. Anything after the last well-formed dataset is reported as `rest` (not trusted).
    public static func parse(_ b: [UInt8], origin: Int64, path: String) throws -> (datasets: [Dataset], restAt: Int?) {
        var datasets: [Dataset] = []
        var at = 0
        while at < b.count {
            if b[at] == 0 { // zero padding at the end is common
                if b[at...].allSatisfy({ $0 == 0 }) { break }
            }
            guard b[at] == 0x1C, at + 5 <= b.count else { return (datasets, at) }
            let record = b[at + 1], number = b[at + 2]
            var length = BigEndian.u16(b, at + 3)
            var header = 5
            if length & 0x8000 != 0 { // extended dataset: the next N bytes hold the length
                let n = length & 0x7FFF
                guard n <= 4, at + 5 + n <= b.count else { return (datasets, at) }
                length = (0..<n).reduce(0) { $0 << 8 | Int(b[at + 5 + $1]) }
                header += n
            }
            guard at + header + length <= b.count else { return (datasets, at) }
            datasets.append(Dataset(record: record, number: number, offset: at,
                                    raw: Array(b[at..<at + header + length]), valueRange: (at + header)..<(at + header + length)))
            at += header + length
            guard datasets.count <= 10_000 else {
                throw MetascrubError.limitExceeded(format: "IPTC", path: path, offset: origin + Int64(at), limit: "10000 datasets")
            }
        }
        return (datasets, nil)
    }

    /// One item per distinct dataset key (Keywords may repeat); returns item index → dataset indices. Every value
    /// is read (`ContentInspector`): a caption or a copyright notice that states a position holds a location item,
    /// which decides its dataset, so the block is rebuilt without it.
    public static func itemise(
        _ datasets: [Dataset], bytes: [UInt8], location: String, origin: Int64, options: ScanOptions,
        into items: inout [MetadataItem], notes: inout [Note]
    ) -> [Int: [Int]] {
        var byKey: [String: Int] = [:]
        var map: [Int: [Int]] = [:]
        for (index, d) in datasets.enumerated() {
            let (name, category, known) = name(record: d.record, number: d.number)
            let key = "iptc:\(name)"
            let value = options.includeValues ? String(decoding: bytes[d.valueRange].prefix(200), as: UTF8.self) : nil
            let item: Int
            if let existing = byKey[key] {
                item = existing
                map[item, default: []].append(index)
                if let value, let old = items[item].value { items[item].value = old + "; " + value }
            } else {
                items.append(MetadataItem(key: key, category: category, location: "\(location)/\(d.record):\(d.number)",
                                          offset: origin + Int64(d.offset), length: Int64(d.raw.count), value: value, isUnknown: !known))
                item = items.count - 1
                byKey[key] = item
                map[item] = [index]
            }
            if category != .location, category != .structure {
                ContentInspector.inspect(Array(bytes[d.valueRange]), origin: origin + Int64(d.valueRange.lowerBound), parent: item,
                                         options: options, items: &items, notes: &notes)
            }
        }
        return map
    }

    /// Datasets kept, in their original order; structural ones (record versions, character set) only when
    /// something else of their record stays.
    public static func rebuild(_ datasets: [Dataset], map: [Int: [Int]], keeps: (Int) -> Bool) -> [UInt8]? {
        var keep = Set<Int>()
        for (item, indices) in map where keeps(item) { keep.formUnion(indices) }
        let meaningful = keep.filter { name(record: datasets[$0].record, number: datasets[$0].number).1 != .structure }
        guard !meaningful.isEmpty else { return nil }
        return datasets.indices.filter { keep.contains($0) }.flatMap { datasets[$0].raw }
    }
}
