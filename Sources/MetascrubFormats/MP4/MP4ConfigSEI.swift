// SPDX-License-Identifier: GPL-3.0-or-later
import MetascrubCore

/// Encoder user data in an HEVC sample entry's `hvcC` (see `DecoderConfigSEI`): each message is an item whose
/// removal overwrites its payload in place with same-length filler, as in the samples, so `moov` keeps its size.
extension MP4Scanner {
    mutating func scanConfigSEI(entry: Box, track id: UInt32) throws {
        let children = try reader.boxes(in: (entry.payloadOffset + 78)..<entry.end, parentPath: entry.path, depth: 7)
        guard let config = children.boxes.first(where: { $0.type == "hvcC" }) else { return }
        for message in DecoderConfigSEI.messages(hvcC: try reader.payload(of: config), at: config.payloadOffset) {
            guard let filler = message.filler else {
                found.note(Note(.warning, code: "sei-kept", "an SEI user-data message in the hvcC of track \(id) cannot be overwritten in place; it is kept",
                                offset: message.range.lowerBound))
                continue
            }
            add(message.key, message.category, config, detail: "\(message.what) in the decoder configuration of track \(id)",
                value: message.text, unknown: message.unknown, edit: .patch([(message.range, filler)]))
        }
    }
}
