// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// SEI user_data_unregistered messages in the length-prefixed NAL units of one H.264/HEVC sample (MP4 samples,
/// Matroska blocks), and the tally that turns a message in every access unit into one item per kind with a
/// count, the first location and every same-length replacement.
enum SampleSEI {
    /// Largest SEI NAL unit read into memory.
    static let nalLimit = 1 << 20

    struct Message {
        /// Escaped payload bytes in the file.
        var range: Range<Int64>
        /// Same-length filler, or nil when the payload cannot be overwritten in place.
        var filler: [UInt8]?
        var key: String
        var category: Category
        var what: String
        var text: String
        var uuid: String
        /// Data of a kind no one defines (unregistered SEI user data, an APPn no one names): the policy's `unknown` rule.
        var unknown = false
    }

    /// Walks the NAL units, reading only headers and SEI units. H.264 puts every SEI before the first slice of
    /// the access unit, so the walk stops there; HEVC also has suffix SEI after its slices.
    static func messages(_ source: any ByteSource, at offset: Int64, size: Int64, lengthSize: Int, hevc: Bool,
                         format: String, path: @autoclosure () -> String) throws -> [Message] {
        var out: [Message] = []
        var at = offset
        let end = offset + size
        while at + Int64(lengthSize) + 2 <= end {
            let head = try source.read(at: at, count: lengthSize + 2, format: format, path: path())
            var length: Int64 = 0
            for b in head.prefix(lengthSize) { length = length << 8 | Int64(b) }
            let nalStart = at + Int64(lengthSize)
            guard length > 0, length <= end - nalStart else { break }
            let type = hevc ? Int(head[lengthSize] >> 1) & 0x3F : Int(head[lengthSize] & 0x1F)
            if !hevc && (1...5).contains(type) { break }
            let isSEI = hevc ? (type == 39 || type == 40) : type == 6
            if isSEI, length <= Int64(nalLimit) {
                let nal = try source.read(at: nalStart, count: Int(length), format: format, path: path() + " SEI")
                out += userData(nal: nal, nalStart: nalStart, hevc: hevc)
            }
            at = nalStart + length
        }
        return out
    }

    /// The user_data_unregistered messages of one SEI NAL unit. HEVC's two-byte NAL header is presented to the
    /// H.264 SEI reader as a one-byte one: the message syntax is the same.
    static func userData(nal: [UInt8], nalStart: Int64, hevc: Bool) -> [Message] {
        let view = hevc ? [UInt8(6)] + nal.dropFirst(2) : nal
        let shift: Int64 = hevc ? 1 : 0
        let codec = hevc ? "hevc" : "h264"
        var out: [Message] = []
        for message in H264SEI.messages(nal: view) where message.payloadType == H264SEI.userDataUnregistered {
            guard let uuid = message.uuid, !message.isNeutralised else { continue }
            let range = (nalStart + shift + Int64(message.escapedRange.lowerBound))..<(nalStart + shift + Int64(message.escapedRange.upperBound))
            let text = message.payload.dropFirst(16).prefix(40)
            let ascii = String(decoding: text.filter { (0x20...0x7E).contains($0) }, as: UTF8.self)
            let (key, category, what): (String, Category, String)
            if uuid == H264SEI.x264UUID || ascii.hasPrefix("x264") || ascii.hasPrefix("x265") {
                (key, category, what) = ("\(codec):sei/encoder-settings", .software, "encoder option string (\(ascii.prefix(4)))")
            } else if message.isMDPM {
                (key, category, what) = ("\(codec):sei/mdpm", .location, "AVCHD camera data (MDPM: date, GPS, camera)")
            } else {
                (key, category, what) = ("\(codec):sei/user-data", .software, "unregistered user data \(BoxUUID.hex(uuid))")
            }
            out.append(Message(range: range, filler: H264SEI.neutralised(nal: view, message: message), key: key, category: category,
                               what: what, text: ascii, uuid: BoxUUID.hex(uuid), unknown: key.hasSuffix("user-data")))
        }
        return out
    }

    /// One item per track and kind of message, however many access units carry it.
    struct Tally {
        struct Kind {
            var item: Int
            var what: String
            var first: String
            var count = 0
            var patches: [(range: Range<Int64>, bytes: [UInt8])] = []
        }

        var kinds: [String: Kind] = [:]
        /// Every range that will be overwritten (the verifiers skip them).
        var ranges: [Range<Int64>] = []
        var notes: [Note] = []
        private var warned: Set<String> = []

        /// Counts `message`; `newItem` makes the kind's item the first time it is seen and returns its index.
        mutating func record(_ message: Message, track: String, location: String, newItem: () -> Int) {
            let id = "\(track)/\(message.key)/\(message.uuid)"
            if kinds[id] == nil { kinds[id] = Kind(item: newItem(), what: message.what, first: location) }
            kinds[id]!.count += 1
            guard let filler = message.filler else {
                if warned.insert(id).inserted {
                    notes.append(Note(.warning, code: "sei-kept", "an SEI user-data message at \(location) cannot be overwritten in place; it is kept",
                                      offset: message.range.lowerBound))
                }
                return
            }
            ranges.append(message.range)
            kinds[id]!.patches.append((message.range, filler))
        }

        /// "what ×count (first: location)" for each kind's item.
        func detail(_ kind: Kind) -> String {
            "\(kind.what)\(kind.count == 1 ? "" : " ×\(kind.count)") (first: \(kind.first))"
        }
    }
}
